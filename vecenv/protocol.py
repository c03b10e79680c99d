"""The game protocol: what a game folder holds, in one place.

The registry checks it, ``vecenv check`` and ``vecenv.testing`` hold games to it, ``vecenv new``
writes folders that follow it, and the documentation's "Write your own game" walks through it
(docs/own-game/).

A game is a folder ``<name>/`` (anywhere: see ``vecenv.registry``) holding:

**``<name>.json``**, the specification, in kaggle-environments' format plus what arrays need:

- ``name`` (the folder's), ``title``, ``description``, ``version``, ``agents`` (a list holding
  the game's number of agents, 1 to ``MAX_AGENTS``: [1], [2], [3], [4]; the faces take the
  largest);
- ``configuration``: {key: {type, default, minimum, maximum, description}}, read by the rules as
  ``cfg.<key>`` (a record: numbers and booleans only);
- ``observation``: {field: {shape, dtype, low, high, shared, description}}, one array per field,
  (N, agents, *shape) or (N, *shape) when ``shared``; shapes and bounds may be expressions over
  the configuration (``"rows * columns"``); ``"kaggle": false`` hides a field from the Kaggle
  face and ``absent`` names the value Kaggle shows as a missing key;
- ``action``: Kaggle's integer schema (a discrete action, ``minimum``/``maximum``, or ``low``/
  ``high`` expressions) or an ``array`` with ``shape``, ``dtype``, ``low``, ``high``;
- ``reward``; optional sections ``gym`` (``id``, ``max_episode_steps``, ``reward_threshold``:
  registers ``vecenv/<id>``), ``kaggle`` (present: a Kaggle game, played by ``vecenv.kaggle``),
  ``status`` (Kaggle's per-seat ``defaults``), ``render`` (``fps``), ``csuite``.

**``rules.py``**, the rules, numba functions over one episode's state record ``s``. Required:

- ``FIELDS``: the record's fields after the engine's header (``rng``, ``step``, ``done``), a list
  of ``(name, dtype[, shape])`` or a function of the configuration dict returning one;
- ``reset(s, cfg)``: start an episode, drawing randomness from ``s.rng`` only
  (``vecenv.kernels.rng``);
- ``step(s, cfg, actions, rewards) -> int``: apply this episode's flat action row, write one
  reward per agent, return non-zero when the episode terminates;
- ``observe(s, cfg, obs, i)``: write episode ``i``'s observation into the tuple of arrays
  ``obs`` (the spec's fields in order).

Optional:

- ``observe_step(s, cfg, obs, i)``: ``observe`` after a step, writing only what the step
  changed (the step that ends an episode included, except under same-step autoreset, where
  ``observe`` writes the final observation and the next episode's first);
- ``STATE_BOUNDS`` ({field: (low, high)}) and ``check_state(records, config) -> message or
  None``: what ``set_state`` refuses;
- ``position(record, config, given)``: a plain Python function building a record from a
  starting position (``vecenv.kernels.position`` says what ``given`` holds);
- ``POSITION_KEYS``: the game's own keys of a position beside the observation (chess's
  ``"fen"``), handed to ``position`` as given;
- ``redraw_hidden(records, config, agent, rng)``: declares that the game has hidden
  information (cards an agent alone sees, a card dealt face down). A plain Python function that
  draws again, in place, what ``agent`` cannot see in each record of ``records`` (a 1-d array of
  the game's records), uniformly among what is consistent with what it sees, from the numpy
  ``Generator`` ``rng``. The game's ``observe`` writes agent k's row of each per-agent field from
  what agent k may see alone, and its shared fields from what every agent sees; the contract
  check "hidden information" redraws with this hook and requires agent k's observation (and its
  built-in agents' moves) to stay byte for byte the same. The search agent ``mcts``, which reads
  whole records, refuses such a game;
- ``CHANCE = True``: declares that ``step`` draws from the episode's stream (dice, a tile, a card
  dealt in play). The search then steps every record it makes with a word of its own stream and
  keeps an action's outcomes under a chance node (``vecenv.kernels.search``): it never reads
  what the episode will draw. The contract check "chance" fails a game whose ``step`` draws
  without declaring it.

Games of two or more agents keep ``status`` and ``reward`` fields (one entry per agent) and take
turns through ``vecenv.kernels.turns`` (Kaggle's statuses). Chance (dice, cards, tiles) is drawn
from the episode's own stream (``s.rng``) inside ``reset`` and ``step``, never elsewhere: the same
seed then gives the same deals for any batch split, and a search gives a record a stream of its
own to draw a chance outcome (``vecenv.search``), never reading what the episode will draw.
Compile every function with ``@nb.njit(cache=True, error_model="numpy")``; no Python objects, no
allocation.

**``agents.py``** (optional), built-in agents that move inside the engine: ``NAMES`` (their
names; the index is the agent's kind), ``MEMORY`` (int64 words an agent keeps per match, or a
function of the configuration), and the numba function
``act(kind, obs, i, player, step, cfg, memory, r) -> int`` (``vecenv.kernels.agents``). Optional:
``HOST_AGENTS``, the names of agents that move from Python (an agent whose work needs more than a
compiled step holds, e.g. a solver's table), and ``host_agent(name, config)`` making one: an
object whose ``act(obs, rngs) -> actions`` plays the K positions where it is to move (``obs``
{field: (K, ...)} as its seat sees them, ``rngs`` (K,) records whose ``rng`` words are the seats'
streams, advanced in place), refusing a configuration it cannot play with a ValueError.

**``render.py``** (optional), frames of one record ``state`` under the configuration dict:

- ``rgb_array(state, config)``: an (H, W, 3) uint8 array;
- ``ansi(state, config)``: text;
- ``ansi_episode(steps, configuration)``: the text of a whole episode as the Kaggle face records
  it (Kaggle's per-agent states of every step), where Kaggle's text tells more than one record.

**``replay.js``** (optional), the HTML replay's drawing code for the Kaggle face (``renderStep``).

**``board.py``** (optional), the board as AlphaZero's network reads it (``vecenv.alphazero``):
``FIELD`` (the name of the observation field holding the cells, categorical, row-major),
``shape(config) -> (rows, columns)`` (the residual network's planes) and
``symmetries(config) -> [(cells, actions), ...]``, the board's symmetries besides the identity
under which the rules are the same (connect four's mirror, tic-tac-toe's and othello's seven
rotations and reflections; none: ``[]``), each two index arrays: the image's cell i is the
original's ``cells[i]``, its action j the original's action ``actions[j]`` (actions counted from
the lowest). ``vecenv.kernels.symmetry`` gives the usual ones; the replay buffer sees each sampled
position through one of them. ``tests/test_alphazero_network.py`` checks every game's: the image
of a position, started from, has the moved legal actions and plays on as its image.
"""

SPEC_SUFFIX = ".json"
# The most agents a game may declare: every face and tool sizes its seats from the game's count;
# those two-player by nature (the arena's ratings, AISysProj, the search) refuse more than two.
MAX_AGENTS = 4
RULES = "rules"
REQUIRED_RULES = ("FIELDS", "reset", "step", "observe")
OPTIONAL_RULES = (
    "observe_step",
    "STATE_BOUNDS",
    "check_state",
    "position",
    "POSITION_KEYS",
    "redraw_hidden",
    "CHANCE",
)
HIDDEN_INFORMATION = "redraw_hidden"
CHANCE = "CHANCE"
AGENTS = "agents"
REQUIRED_AGENTS = ("NAMES", "MEMORY", "act")
OPTIONAL_AGENTS = ("HOST_AGENTS", "host_agent")
RENDER = "render"
BOARD = "board"
REQUIRED_BOARD = ("FIELD", "shape", "symmetries")
RENDERERS = ("rgb_array", "ansi", "ansi_episode")
