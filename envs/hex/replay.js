// Hex replay drawing: the size x size rhombus of hexagons (each row half a cell right of the one
// above) with black (mark 1, top to bottom) and white (mark 2, left to right) stones, from agent
// 0's observation.board (size * size cells, row-major from the top-left).
var HEX_STONES = { 1: "#1a1a1a", 2: "#f5f5f5" };
var HEX_COLOUR_NAMES = ["black", "white"];

function hexPath(ctx, x, y, r) {
  ctx.beginPath();
  for (var k = 0; k < 6; k++) {
    var a = Math.PI / 6 + (k * Math.PI) / 3;
    if (k === 0) ctx.moveTo(x + r * Math.cos(a), y + r * Math.sin(a));
    else ctx.lineTo(x + r * Math.cos(a), y + r * Math.sin(a));
  }
  ctx.closePath();
}

function renderStep({ ctx, width, height, step, steps, configuration, environment, statusEl }) {
  var size = configuration.size || 11;
  var agents = steps[step];
  var board = (agents[0].observation && agents[0].observation.board) || [];
  if (board.length !== size * size) board = [];
  var r = Math.min(width / (Math.sqrt(3) * (1.5 * size + 1)), height / (1.5 * size + 1.5));
  var w = Math.sqrt(3) * r;
  var x0 = (width - w * (1.5 * size - 0.5)) / 2, y0 = (height - 1.5 * r * (size - 1)) / 2;
  ctx.fillStyle = "#5a7d8c";
  ctx.fillRect(0, 0, width, height);
  var cells = [];
  for (var i = 0; i < size * size; i++) {
    var row = Math.floor(i / size), col = i % size;
    var cx = x0 + w * (col + row / 2), cy = y0 + 1.5 * r * row;
    hexPath(ctx, cx, cy, r);
    ctx.fillStyle = "#d9c49a";
    ctx.fill();
    ctx.strokeStyle = row === 0 || row === size - 1 ? "#1a1a1a" : col === 0 || col === size - 1 ? "#e8e8e8" : "#8d6e3f";
    ctx.stroke();
    var value = board[i] || 0;
    if (value === 1 || value === 2) {
      ctx.beginPath();
      ctx.arc(cx, cy, r * 0.6, 0, 2 * Math.PI);
      ctx.fillStyle = HEX_STONES[value];
      ctx.fill();
    }
    cells.push([cx, cy]);
  }
  if (statusEl) {
    statusEl.textContent = turnStatus(agents, function (k) {
      return playerName(environment, k) + " (" + HEX_COLOUR_NAMES[k] + ")";
    });
  }
  return { cells: cells, size: size };
}
