// Gardner chess replay drawing: the 5x5 board from agent 0's observation.board (25 squares in
// Pgx's order, 5 * file + rank: a1, a2, ..., e5; white positive: 1 pawn, 2 knight, 3 bishop,
// 4 rook, 5 queen, 6 king), white at the bottom, the pieces as Unicode chess symbols.
var GARDNER_WHITE = ["", "\u2659", "\u2658", "\u2657", "\u2656", "\u2655", "\u2654"];
var GARDNER_BLACK = ["", "\u265F", "\u265E", "\u265D", "\u265C", "\u265B", "\u265A"];

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var board = (agents[0].observation && agents[0].observation.board) || [];
  if (board.length !== 25) board = [];
  var cell = Math.floor(Math.min(width, height) / 5.5);
  var x0 = Math.floor((width - 5 * cell) / 2);
  var y0 = Math.floor((height - 5 * cell) / 2);
  ctx.fillStyle = "#5d4037";
  ctx.fillRect(0, 0, width, height);
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.font = Math.floor(cell * 0.8) + "px serif";
  var cells = [];
  for (var file = 0; file < 5; file++) {
    for (var rank = 0; rank < 5; rank++) {
      var left = x0 + file * cell;
      var top = y0 + (4 - rank) * cell;
      ctx.fillStyle = (file + rank) % 2 === 0 ? "#b58863" : "#f0d9b5";
      ctx.fillRect(left, top, cell, cell);
      var value = board[5 * file + rank] || 0;
      if (value !== 0) {
        ctx.fillStyle = "#000000";
        var glyph = value > 0 ? GARDNER_WHITE[value] : GARDNER_BLACK[-value];
        ctx.fillText(glyph || "?", left + cell / 2, top + cell / 2);
      }
      cells.push({ x: left + cell / 2, y: top + cell / 2, value: value });
    }
  }
  var text = "";
  if (agents[0].status === "DONE" && agents[1].status === "DONE") {
    text = agents[0].reward > 0 ? "White wins" : agents[1].reward > 0 ? "Black wins" : "Draw";
  } else if (agents[0].status === "ACTIVE") {
    text = "White to move";
  } else if (agents[1].status === "ACTIVE") {
    text = "Black to move";
  } else {
    text = agents[0].status + " / " + agents[1].status;
  }
  if (statusEl) statusEl.textContent = text;
  return { cells: cells };
}
