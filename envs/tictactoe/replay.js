// TicTacToe replay drawing: a 3x3 grid of white cells; X (mark 1) is a blue cross and O (mark 2)
// a red disc, both solid through the cell centre. The board is agent 0's observation.board.
var TICTACTOE_GLYPHS = ["X", "O"];

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var board = (agents[0].observation && agents[0].observation.board) || [];
  if (board.length !== 9) board = [];

  var pad = 16, gap = 6;
  var cell = Math.floor((Math.min(width, height) - 2 * pad) / 3);
  var x0 = Math.floor((width - 3 * cell) / 2);
  var y0 = Math.floor((height - 3 * cell) / 2);

  ctx.fillStyle = "#263238";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#455a64";
  ctx.fillRect(x0, y0, 3 * cell, 3 * cell);

  var cells = [];
  for (var i = 0; i < 9; i++) {
    var left = x0 + (i % 3) * cell;
    var top = y0 + Math.floor(i / 3) * cell;
    var cx = left + cell / 2;
    var cy = top + cell / 2;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(left + gap / 2, top + gap / 2, cell - gap, cell - gap);
    var value = board[i] || 0;
    if (value === 1) {
      var arm = cell * 0.3;
      ctx.strokeStyle = "#1e88e5";
      ctx.lineWidth = cell * 0.14;
      ctx.lineCap = "round";
      ctx.beginPath();
      ctx.moveTo(cx - arm, cy - arm);
      ctx.lineTo(cx + arm, cy + arm);
      ctx.moveTo(cx + arm, cy - arm);
      ctx.lineTo(cx - arm, cy + arm);
      ctx.stroke();
    } else if (value === 2) {
      ctx.fillStyle = "#e53935";
      ctx.beginPath();
      ctx.arc(cx, cy, cell * 0.32, 0, 2 * Math.PI);
      ctx.fill();
    }
    cells.push([cx, cy]);
  }

  statusEl.textContent = turnStatus(agents, function (k) {
    return playerName(environment, k) + " (" + TICTACTOE_GLYPHS[k] + ")";
  });
  return { cells: cells, rows: 3, columns: 3 };
}
