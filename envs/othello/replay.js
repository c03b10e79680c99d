// Othello replay drawing: a green 8x8 board with black (mark 1) and white (mark 2) discs, from
// agent 0's observation.board (64 squares, row-major from the top-left).
function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var board = (agents[0].observation && agents[0].observation.board) || [];
  if (board.length !== 64) board = [];
  var cell = Math.floor(Math.min(width, height) / 8.5);
  var x0 = Math.floor((width - 8 * cell) / 2);
  var y0 = Math.floor((height - 8 * cell) / 2);
  ctx.fillStyle = "#1b5e20";
  ctx.fillRect(0, 0, width, height);
  var cells = [];
  for (var i = 0; i < 64; i++) {
    var left = x0 + (i % 8) * cell;
    var top = y0 + Math.floor(i / 8) * cell;
    ctx.fillStyle = "#2e7d32";
    ctx.fillRect(left + 1, top + 1, cell - 2, cell - 2);
    var value = board[i] || 0;
    if (value === 1 || value === 2) {
      ctx.fillStyle = value === 1 ? "#212121" : "#fafafa";
      ctx.beginPath();
      ctx.arc(left + cell / 2, top + cell / 2, cell * 0.4, 0, 2 * Math.PI);
      ctx.fill();
    }
    cells.push({ x: left + cell / 2, y: top + cell / 2, value: value });
  }
  var counts = [0, 0, 0];
  for (var k = 0; k < board.length; k++) counts[board[k]] += 1;
  var text = "Black " + counts[1] + " - " + counts[2] + " White";
  if (agents[0].status === "DONE" && agents[1].status === "DONE") {
    text += agents[0].reward > 0 ? ": Black wins" : agents[1].reward > 0 ? ": White wins" : ": draw";
  } else if (agents[0].status === "ACTIVE") {
    text += ": Black to move";
  } else if (agents[1].status === "ACTIVE") {
    text += ": White to move";
  }
  if (statusEl) statusEl.textContent = text;
  return { cells: cells };
}
