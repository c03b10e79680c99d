// Leduc hold'em replay drawing: the table as a spectator sees it after the episode, both agents'
// cards (each agent's observation.card: its own) face up, the public card (agent 0's
// observation.public, -1 while face down) between them, the chips each bet (observation.chips),
// the agent to act marked. A replay is shown once the game is over.
var LEDUC_RANKS = ["J", "Q", "K"];

function leducCard(ctx, x, y, w, h, text) {
  ctx.fillStyle = "#212121";
  ctx.fillRect(x - 1, y - 1, w + 2, h + 2);
  ctx.fillStyle = text === "?" ? "#3a4f9c" : "#fafaf5";
  ctx.fillRect(x, y, w, h);
  if (text === "?") return;
  ctx.fillStyle = "#212121";
  ctx.font = "bold " + Math.floor(h * 0.45) + "px sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, x + w / 2, y + h / 2);
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var shared = agents[0].observation || {};
  var chips = shared.chips || [1, 1];
  ctx.fillStyle = "#1b5e3a";
  ctx.fillRect(0, 0, width, height);
  var w = Math.floor(width / 7), h = Math.floor(w * 1.4);
  leducCard(ctx, Math.floor((width - w) / 2), Math.floor(height * 0.08), w, h,
            LEDUC_RANKS[shared.public] || "?");
  var cells = [];
  for (var k = 0; k < 2; k++) {
    var x = Math.floor(width * (k === 0 ? 0.15 : 0.7)), y = Math.floor(height * 0.45);
    var card = agents[k].observation ? agents[k].observation.card : undefined;
    leducCard(ctx, x, y, w, h, LEDUC_RANKS[card] || "?");
    ctx.fillStyle = "#ffd54f";
    ctx.font = Math.floor(h * 0.22) + "px sans-serif";
    ctx.textAlign = "center";
    ctx.fillText((chips[k] || 0) + " chips", x + w / 2, y + h + 24);
    if (agents[k].status === "ACTIVE") ctx.fillRect(x, y - 14, w, 6);
    cells.push([x + w / 2, y + h / 2]);
  }
  if (statusEl) {
    statusEl.textContent = turnStatus(agents, function (k) {
      return playerName(environment, k);
    });
  }
  return { cells: cells, card: [w, h] };
}
