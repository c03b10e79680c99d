// Backgammon replay drawing, from agent 0's observation.board (28 counts: points 0-23, the two
// bars, the two trays; agent 0's checkers positive, light; agent 1's negative, dark). Agent 0
// travels along the bottom row from point 0 (bottom right) to 11, then along the top row from
// 12 (top left) to 23; the bar between the halves, the trays on the right, the dice in the middle.
var BG_CHECKERS = ["#f5f5f0", "#262626"];
var BG_POINTS = ["#e8d5a3", "#a83b32"];

function bgStack(ctx, x, y0, count, owner, down, r) {
  for (var k = 0; k < Math.min(count, 5); k++) {
    var cy = y0 + (r + 2 * r * k) * (down ? 1 : -1);
    ctx.beginPath();
    ctx.arc(x, cy, r - 1, 0, 2 * Math.PI);
    ctx.fillStyle = BG_CHECKERS[owner];
    ctx.fill();
    ctx.strokeStyle = "#9e9e9e";
    ctx.stroke();
  }
  if (count > 5) {
    ctx.fillStyle = BG_CHECKERS[1 - owner];
    ctx.font = "bold " + Math.floor(r) + "px sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(String(count), x, y0 + (r + 8 * r) * (down ? 1 : -1));
  }
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var obs = agents[0].observation || {};
  var board = obs.board || [];
  if (board.length !== 28) board = [];
  var w = width / 14, bar = w, h = height * 0.42, top = height * 0.04, bottom = height * 0.96;
  ctx.fillStyle = "#6d4c41";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#2e6b4f";
  ctx.fillRect(0, top, 12 * w + bar, bottom - top);
  var cells = [];
  for (var p = 0; p < 24; p++) {
    var upper = p >= 12, column = upper ? p - 12 : 11 - p;
    var x = column * w + (column >= 6 ? bar : 0);
    var base = upper ? top : bottom, tip = upper ? top + h : bottom - h;
    ctx.beginPath();
    ctx.moveTo(x, base);
    ctx.lineTo(x + w, base);
    ctx.lineTo(x + w / 2, tip);
    ctx.closePath();
    ctx.fillStyle = BG_POINTS[p % 2];
    ctx.fill();
    var count = board[p] || 0;
    if (count) bgStack(ctx, x + w / 2, base, Math.abs(count), count > 0 ? 0 : 1, upper, w / 2);
    cells.push([x + w / 2, upper ? top + w / 2 : bottom - w / 2]);
  }
  var r = w / 2, centre = 6 * w + bar / 2, middle = (top + bottom) / 2;
  if (board[24]) bgStack(ctx, centre, middle + 4, board[24], 0, true, r);
  if (board[25]) bgStack(ctx, centre, middle - 4, -board[25], 1, false, r);
  if (board[26]) bgStack(ctx, 12 * w + bar + w / 2, top, board[26], 0, true, r);
  if (board[27]) bgStack(ctx, 12 * w + bar + w / 2, bottom, -board[27], 1, false, r);
  var dice = obs.dice || [];
  for (var k = 0; k < dice.length; k++) {
    var dx = 3 * w + (k - 1) * w * 1.1 + (obs.turn === 2 ? 6 * w + bar : 0);
    ctx.fillStyle = "#fafafa";
    ctx.fillRect(dx, middle - w / 2, w * 0.9, w * 0.9);
    ctx.fillStyle = "#212121";
    ctx.font = "bold " + Math.floor(w * 0.6) + "px sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(String(dice[k]), dx + w * 0.45, middle - w / 2 + w * 0.47);
  }
  if (statusEl) {
    statusEl.textContent = turnStatus(agents, function (k) {
      return playerName(environment, k) + (k === 0 ? " (X)" : " (O)");
    });
  }
  return { cells: cells };
}
