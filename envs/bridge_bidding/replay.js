// Bridge bidding replay drawing: the table as a spectator sees it, one row an agent: its 13 cards
// (each agent's observation.hand: its own, 52 booleans in Pgx's card order, spades first, the ace
// first in each suit), the calls it made so far (each step's action of the agent that was to
// call); the agent to call marked. A replay is shown once the game is over.
var BRIDGE_SUITS = ["\u2660", "\u2665", "\u2666", "\u2663"];
var BRIDGE_RANKS = "A23456789TJQK";
var BRIDGE_HIGH_FIRST = "AKQJT98765432";
var BRIDGE_DENOMINATIONS = ["\u2663", "\u2666", "\u2665", "\u2660", "NT"];

function bridgeCall(action) {
  if (action === 0) return "P";
  if (action === 1) return "X";
  if (action === 2) return "XX";
  var bid = action - 3;
  return String(Math.floor(bid / 5) + 1) + BRIDGE_DENOMINATIONS[bid % 5];
}

function bridgeHand(hand) {
  var suits = [];
  for (var s = 0; s < 4; s++) {
    var held = [];
    for (var r = 0; r < 13; r++) {
      if (hand[s * 13 + r]) held.push(BRIDGE_RANKS[r]);
    }
    held.sort(function (a, b) {
      return BRIDGE_HIGH_FIRST.indexOf(a) - BRIDGE_HIGH_FIRST.indexOf(b);
    });
    suits.push(BRIDGE_SUITS[s] + (held.join("") || "-"));
  }
  return suits.join(" ");
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  ctx.fillStyle = "#1b5e3a";
  ctx.fillRect(0, 0, width, height);
  var calls = agents.map(function () { return []; });
  for (var i = 1; i <= step; i++) {
    var before = steps[i - 1];
    for (var k = 0; k < before.length; k++) {
      if (before[k].status === "ACTIVE") calls[k].push(bridgeCall(steps[i][k].action));
    }
  }
  var rowHeight = Math.floor(height / (agents.length + 0.5));
  var size = Math.max(10, Math.floor(rowHeight * 0.22));
  var rows = [];
  for (var k = 0; k < agents.length; k++) {
    var seen = agents[k].observation || {};
    var y = Math.floor(rowHeight * (k + 0.5));
    ctx.fillStyle = agents[k].status === "ACTIVE" ? "#ffd54f" : "#fafaf5";
    ctx.font = "bold " + size + "px sans-serif";
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillText(playerName(environment, k), 8, y - size);
    ctx.font = size + "px monospace";
    ctx.fillText(bridgeHand(seen.hand || []), 8, y + 2);
    ctx.fillText(calls[k].join(" "), 8, y + size + 4);
    rows.push([8, y]);
  }
  if (statusEl) {
    var mover = agents.findIndex(function (a) { return a.status === "ACTIVE"; });
    if (mover >= 0) {
      statusEl.textContent = playerName(environment, mover) + " to call";
    } else {
      statusEl.textContent = agents.map(function (a, i) {
        var r = typeof a.reward === "number" ? a.reward.toFixed(0) : a.status;
        return playerName(environment, i) + ": " + r;
      }).join(", ");
    }
  }
  return { rows: rows };
}
