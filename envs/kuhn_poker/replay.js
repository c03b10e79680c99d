// Kuhn poker replay drawing: the table as a spectator sees it after the episode, both agents'
// cards (each agent's observation.card: its own) face up with their bets (agent 0's
// observation.chips), the agent to act marked. A replay is shown once the game is over.
var KUHN_RANKS = ["J", "Q", "K"];

function kuhnCard(ctx, x, y, w, h, text) {
  ctx.fillStyle = "#212121";
  ctx.fillRect(x - 1, y - 1, w + 2, h + 2);
  ctx.fillStyle = "#fafaf5";
  ctx.fillRect(x, y, w, h);
  ctx.fillStyle = "#212121";
  ctx.font = "bold " + Math.floor(h * 0.45) + "px sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, x + w / 2, y + h / 2);
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var chips = (agents[0].observation && agents[0].observation.chips) || [0, 0];
  ctx.fillStyle = "#1b5e3a";
  ctx.fillRect(0, 0, width, height);
  var w = Math.floor(width / 6), h = Math.floor(w * 1.4);
  var cells = [];
  for (var k = 0; k < 2; k++) {
    var x = Math.floor(width * (k === 0 ? 0.2 : 0.63)), y = Math.floor(height * 0.25);
    var card = agents[k].observation ? agents[k].observation.card : undefined;
    kuhnCard(ctx, x, y, w, h, KUHN_RANKS[card] || "?");
    for (var c = 0; c < (chips[k] || 0); c++) {
      ctx.beginPath();
      ctx.arc(x + w / 2, y + h + 24 + 18 * c, 10, 0, 2 * Math.PI);
      ctx.fillStyle = "#e04030";
      ctx.fill();
    }
    if (agents[k].status === "ACTIVE") {
      ctx.fillStyle = "#ffd54f";
      ctx.fillRect(x, y - 14, w, 6);
    }
    cells.push([x + w / 2, y + h / 2]);
  }
  if (statusEl) {
    statusEl.textContent = turnStatus(agents, function (k) {
      return playerName(environment, k);
    });
  }
  return { cells: cells, card: [w, h] };
}
