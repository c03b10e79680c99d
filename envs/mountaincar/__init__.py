"""MountainCar-v0: drive an underpowered car up a hill (Moore, 1990), as gymnasium's."""
