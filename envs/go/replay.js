// Go replay drawing: a wooden size x size board with black (mark 1) and white (mark 2) stones,
// from agent 0's observation.board (size * size points, row-major from the top-left). The stone
// played this step is marked with a dot.
var GO_STONES = { 1: "#1a1a1a", 2: "#f5f5f5" };
var GO_COLOUR_NAMES = ["black", "white"];

function renderStep({ ctx, width, height, step, steps, configuration, environment, statusEl }) {
  var size = configuration.size || 9;
  var agents = steps[step];
  var board = (agents[0].observation && agents[0].observation.board) || [];
  if (board.length !== size * size) board = [];
  var before = step > 0 ? (steps[step - 1][0].observation || {}).board || [] : [];

  var cell = Math.floor(Math.min(width, height) / (size + 1));
  var x0 = Math.floor((width - cell * size) / 2);
  var y0 = Math.floor((height - cell * size) / 2);
  ctx.fillStyle = "#263238";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#dcb35c";
  ctx.fillRect(x0 - cell / 2, y0 - cell / 2, cell * (size + 1), cell * (size + 1));
  ctx.strokeStyle = "#3e2c14";
  ctx.lineWidth = 1;
  for (var k = 0; k < size; k++) {
    var at = k * cell + cell / 2;
    ctx.beginPath();
    ctx.moveTo(x0 + cell / 2, y0 + at);
    ctx.lineTo(x0 + cell * size - cell / 2, y0 + at);
    ctx.moveTo(x0 + at, y0 + cell / 2);
    ctx.lineTo(x0 + at, y0 + cell * size - cell / 2);
    ctx.stroke();
  }

  var cells = [];
  for (var i = 0; i < size * size; i++) {
    var cx = x0 + (i % size) * cell + cell / 2;
    var cy = y0 + Math.floor(i / size) * cell + cell / 2;
    var value = board[i] || 0;
    if (value === 1 || value === 2) {
      ctx.beginPath();
      ctx.arc(cx, cy, cell * 0.45, 0, 2 * Math.PI);
      ctx.fillStyle = GO_STONES[value];
      ctx.fill();
      ctx.strokeStyle = "#606060";
      ctx.stroke();
      if (before.length === board.length && !before[i]) {
        ctx.beginPath();
        ctx.arc(cx, cy, cell * 0.12, 0, 2 * Math.PI);
        ctx.fillStyle = value === 1 ? "#f5f5f5" : "#1a1a1a";
        ctx.fill();
      }
    }
    cells.push([cx, cy]);
  }

  if (statusEl) {
    statusEl.textContent = turnStatus(agents, function (k) {
      return playerName(environment, k) + " (" + GO_COLOUR_NAMES[k] + ")";
    });
  }
  return { cells: cells, size: size };
}
