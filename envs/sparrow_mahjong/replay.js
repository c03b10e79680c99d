// Sparrow mahjong replay drawing: the table as a spectator sees it, one row a seat (the dealer
// first): the hand of the agent in it (each agent's observation.hand: its own tiles), its
// discards (observation.rivers, shared), the dora; the agent to discard marked. A replay is shown
// once the game is over.
var SPARROW_NAMES = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "G", "R"];

function sparrowTile(ctx, x, y, w, h, type) {
  ctx.fillStyle = "#212121";
  ctx.fillRect(x - 1, y - 1, w + 2, h + 2);
  ctx.fillStyle = "#fafaf0";
  ctx.fillRect(x, y, w, h);
  ctx.fillStyle = type === 10 ? "#d32f2f" : "#1e7d32";
  ctx.font = "bold " + Math.floor(h * 0.55) + "px sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(SPARROW_NAMES[type] || "?", x + w / 2, y + h / 2);
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  ctx.fillStyle = "#1b5e3a";
  ctx.fillRect(0, 0, width, height);
  var first = agents[0].observation || {};
  var rivers = first.rivers || [[], [], []];
  var w = Math.floor(width / 22), h = Math.floor(w * 1.35);
  var rows = [];
  for (var k = 0; k < agents.length; k++) {
    var seen = agents[k].observation || {};
    var seat = typeof seen.seat === "number" ? seen.seat : k;
    var y = Math.floor(height * 0.08) + seat * Math.floor(height * 0.28);
    var x = Math.floor(w * 0.6);
    var hand = seen.hand || [];
    for (var t = 0; t < hand.length; t++) {
      for (var c = 0; c < hand[t]; c++) {
        sparrowTile(ctx, x, y, w, h, t);
        x += w + 3;
      }
    }
    var river = rivers[seat] || [];
    var rx = Math.floor(width * 0.42);
    for (var j = 0; j < river.length; j++) {
      if (river[j] >= 0) sparrowTile(ctx, rx + j * (w + 2), y, w, h, river[j]);
    }
    if (agents[k].status === "ACTIVE") {
      ctx.fillStyle = "#ffd54f";
      ctx.fillRect(2, y, Math.floor(w * 0.3), h);
    }
    rows.push([Math.floor(w * 0.6), y + h / 2]);
  }
  if (typeof first.dora === "number") {
    sparrowTile(ctx, Math.floor(w * 0.6), height - h - 8, w, h, first.dora);
  }
  if (statusEl) {
    var mover = agents.findIndex(function (a) { return a.status === "ACTIVE"; });
    if (mover >= 0) {
      statusEl.textContent = playerName(environment, mover) + " to discard";
    } else {
      statusEl.textContent = agents.map(function (a, i) {
        var r = typeof a.reward === "number" ? (a.reward * 26).toFixed(0) : a.status;
        return playerName(environment, i) + ": " + r;
      }).join(", ");
    }
  }
  return { rows: rows, tile: [w, h] };
}
