"""The line as text: the walker is an o."""


def ansi(state, config):
    cells = ["."] * config["length"]
    cells[int(state["position"])] = "o"
    return "".join(cells)
