"""The csuite games in plain Python: the speed reference of ``test_bench_csuite.py``.

One short class per game, written from the rules of deepmind/csuite's environments: csuite's
``start()`` and ``step(action) -> (observation, reward)``, its order of updates and draws, its
defaults. Plain Python throughout: ``random.Random`` for the draws, lists for the boards (flat,
row-major), ``math`` for the pendulum, an int for the tabular games' observation index. csuite
itself builds numpy arrays and draws from numpy generators on every step, which costs more than
this: these classes are what a straightforward Python version of the rules costs.

``load_record(record)`` takes a state of vecenv's engine (``vecenv.csuite.load(name).get_state()``),
so the test beside the benchmark can check the rules step by step against vecenv's.
"""

import math
import random

TWO_PI = 2 * math.pi
REWARD_LOW = math.pi - 30 * (math.pi / 180)  # the pendulum's reward region, exclusive
REWARD_HIGH = math.pi + 30 * (math.pi / 180)


class Catch:
    """Balls fall one row a step; the one reaching the paddle's row scores +1 on the paddle, -1
    beside it, and leaves; then a ball spawns at the top with probability ``spawn_probability``."""

    def __init__(self, rows=10, columns=5, spawn_probability=0.1, seed=0):
        self.rows, self.columns, self.spawn_probability = rows, columns, spawn_probability
        self.rng = random.Random(seed)
        self.paddle_x = columns // 2
        self.balls = []  # (x, y) of each ball, oldest (lowest) first

    def start(self):
        self.paddle_x = self.columns // 2
        self.balls = [(self.rng.randrange(self.columns), 0)]
        return self.observation()

    def load_record(self, s):
        self.paddle_x = int(s.paddle_x)
        self.balls = [(int(x), y) for y, x in reversed(list(enumerate(s.balls))) if x >= 0]

    def fall(self):
        self.balls = [(x, y + 1) for x, y in self.balls]

    def tick(self):
        """What a variant does after the spawn."""

    def step(self, action):
        self.paddle_x = min(max(self.paddle_x + action - 1, 0), self.columns - 1)
        self.fall()
        reward = 0.0
        balls = self.balls
        if balls and balls[0][1] == self.rows - 1:
            reward = 1.0 if balls[0][0] == self.paddle_x else -1.0
            del balls[0]
        if self.rng.random() < self.spawn_probability:
            balls.append((self.rng.randrange(self.columns), 0))
        self.tick()
        return self.observation(), reward

    def observation(self):
        columns = self.columns
        cells = [0] * (self.rows * columns)
        cells[(self.rows - 1) * columns + self.paddle_x] = 1
        for x, y in self.balls:
            cells[y * columns + x] = 1
        return cells


class WindyCatch(Catch):
    """Catch whose balls are blown one column (wrapping) as they fall; the wind (none, left, right)
    is redrawn every ``change_every`` steps. The observation ends with the wind's three bits."""

    WIND_DELTA = (0, -1, 1)

    def __init__(self, rows=10, columns=5, spawn_probability=0.1, change_every=100000, seed=0):
        super().__init__(rows, columns, spawn_probability, seed)
        self.change_every = change_every
        self.wind = 0
        self.time_since_wind_change = 0

    def start(self):
        self.wind, self.time_since_wind_change = 0, 0
        return super().start()

    def load_record(self, s):
        super().load_record(s)
        self.wind = list(s.wind_direction).index(1)
        self.time_since_wind_change = int(s.time_since_wind_change)

    def fall(self):
        wd, columns = self.WIND_DELTA[self.wind], self.columns
        self.balls = [((x + wd) % columns, y + 1) for x, y in self.balls]

    def tick(self):
        self.time_since_wind_change += 1
        if self.time_since_wind_change % self.change_every == 0:
            self.wind = self.rng.randrange(3)
            self.time_since_wind_change = 0

    def observation(self):
        wind = [0, 0, 0]
        wind[self.wind] = 1
        return Catch.observation(self) + wind


class DancingCatch(Catch):
    """Catch seen through a permutation of the board's cells; two entries of the permutation swap
    every ``swap_every`` steps."""

    def __init__(self, rows=10, columns=5, spawn_probability=0.1, swap_every=10000, seed=0):
        super().__init__(rows, columns, spawn_probability, seed)
        self.swap_every = swap_every
        self.shuffle_idx = list(range(rows * columns))
        self.time_since_swap = 0

    def start(self):
        self.shuffle_idx = list(range(self.rows * self.columns))
        self.time_since_swap = 0
        return super().start()

    def load_record(self, s):
        super().load_record(s)
        self.shuffle_idx = [int(k) for k in s.shuffle_idx]
        self.time_since_swap = int(s.time_since_swap)

    def tick(self):
        self.time_since_swap += 1
        if self.time_since_swap % self.swap_every == 0:
            idx, cells = self.shuffle_idx, len(self.shuffle_idx)
            a, b = self.rng.randrange(cells), self.rng.randrange(cells)
            idx[a], idx[b] = idx[b], idx[a]
            self.time_since_swap = 0

    def observation(self):
        cells = Catch.observation(self)
        return [cells[k] for k in self.shuffle_idx]


class AccessControl:
    """Accepting the waiting customer while a server is free pays its priority and takes a server;
    the next priority is uniform; each busy server then frees with ``free_probability``."""

    PRIORITIES = (1, 2, 4, 8)

    def __init__(self, num_servers=10, free_probability=0.06, seed=0):
        self.num_servers, self.free_probability = num_servers, free_probability
        self.rng = random.Random(seed)
        self.busy, self.priority = 0, 1

    def start(self):
        self.busy = 0
        self.priority = self.rng.choice(self.PRIORITIES)
        return self.observation()

    def load_record(self, s):
        self.busy, self.priority = int(s.num_busy_servers), int(s.incoming_priority)

    def step(self, action):
        reward = 0.0
        if action == 1 and self.busy < self.num_servers:
            reward = float(self.priority)
            self.busy += 1
        priority = self.rng.choice(self.PRIORITIES)
        rng, p = self.rng, self.free_probability
        self.busy -= sum(rng.random() < p for _ in range(self.busy))  # a binomial draw
        self.priority = priority
        return self.observation(), reward

    def observation(self):
        return self.busy * len(self.PRIORITIES) + self.PRIORITIES.index(self.priority)


class Taxi:
    """Drive the taxi on the 5 x 5 grid (walls between some squares of a row), pick the passenger up
    at its coloured square (4: in the taxi) and drop it at its destination: +20 and a new passenger;
    a pickup or dropoff that fails costs -10."""

    COLOURS = ((0, 0), (4, 0), (0, 4), (3, 4))  # (x, y) of Red, Green, Yellow, Blue
    WALLS = frozenset({(1, 0), (1, 1), (0, 3), (0, 4), (2, 3), (2, 4)})  # (x, y): wall east of it

    def __init__(self, seed=0):
        self.rng = random.Random(seed)
        self.x = self.y = self.passenger = self.destination = 0

    def start(self):
        rng = self.rng
        self.x, self.y = rng.randrange(5), rng.randrange(5)
        self.passenger, self.destination = rng.randrange(4), rng.randrange(4)
        return self.observation()

    def load_record(self, s):
        self.x, self.y = int(s.taxi_x), int(s.taxi_y)
        self.passenger, self.destination = int(s.passenger_loc), int(s.destination)

    def step(self, action):
        reward = 0.0
        if action == 0:  # north
            self.y = max(self.y - 1, 0)
        elif action == 2:  # south
            self.y = min(self.y + 1, 4)
        elif action == 3:  # east
            if self.x < 4 and (self.x, self.y) not in self.WALLS:
                self.x += 1
        elif action == 1:  # west
            if self.x > 0 and (self.x - 1, self.y) not in self.WALLS:
                self.x -= 1
        elif action == 4:  # pickup
            if self.passenger == 4 or self.COLOURS[self.passenger] != (self.x, self.y):
                reward = -10.0
            else:
                self.passenger = 4
        elif self.passenger != 4 or self.COLOURS[self.destination] != (self.x, self.y):
            reward = -10.0  # a failed dropoff
        else:
            reward = 20.0
            self.passenger, self.destination = self.rng.randrange(4), self.rng.randrange(4)
        return self.observation(), reward

    def observation(self):
        return ((self.x * 5 + self.y) * 5 + self.passenger) * 4 + self.destination


class Pendulum:
    """A torque of -1, 0 or +1 held for ``act_step_period`` semi-implicit Euler substeps; the angle
    wraps into [0, 2 pi] (0 hanging down); reward 1 within 30 degrees of upright."""

    def __init__(
        self,
        friction=0.1,
        gravity=9.81,
        simulation_step_size=0.05,
        act_step_period=4,
        max_speed=math.inf,
        seed=0,
    ):
        self.friction, self.gravity, self.dt = friction, gravity, simulation_step_size
        self.act_step_period, self.max_speed = act_step_period, max_speed
        self.rng = random.Random(seed)
        self.angle = self.velocity = 0.0

    def start(self):
        self.angle = self.velocity = 0.0
        return self.observation()

    def load_record(self, s):
        self.angle, self.velocity = float(s.angle), float(s.velocity)

    def integrate(self, torque):
        angle, velocity = self.angle, self.velocity
        friction, gravity, dt = self.friction, self.gravity, self.dt
        for _ in range(self.act_step_period):
            velocity += (torque - friction * velocity - gravity * math.sin(angle)) * dt
            angle += velocity * dt
        self.angle = angle % TWO_PI
        self.velocity = min(max(velocity, -self.max_speed), self.max_speed)

    def step(self, action):
        self.integrate(float(action - 1))
        return self.observation(), 1.0 if REWARD_LOW < self.angle < REWARD_HIGH else 0.0

    def observation(self):
        return [math.cos(self.angle), math.sin(self.angle), self.velocity]


class PendulumPoke(Pendulum):
    """The pendulum, poked while in the reward region: with ``perturb_prob``, ``perturb_torque`` is
    subtracted from or added to the action's torque (each with probability 1/2)."""

    def __init__(self, perturb_prob=0.01, perturb_torque=10.0, seed=0, **pendulum):
        super().__init__(seed=seed, **pendulum)
        self.perturb_prob, self.perturb_torque = perturb_prob, perturb_torque

    def step(self, action):
        torque = float(action - 1)
        if REWARD_LOW < self.angle < REWARD_HIGH and self.rng.random() < self.perturb_prob:
            if self.rng.random() < 0.5:
                torque -= self.perturb_torque
            else:
                torque += self.perturb_torque
        self.integrate(torque)
        return self.observation(), 1.0 if REWARD_LOW < self.angle < REWARD_HIGH else 0.0


# csuite name -> class
GAMES = {
    "catch": Catch,
    "windy_catch": WindyCatch,
    "dancing_catch": DancingCatch,
    "access_control": AccessControl,
    "taxi": Taxi,
    "pendulum": Pendulum,
    "pendulum_poke": PendulumPoke,
}
