// Shogi replay drawing: the 9x9 board from agent 0's observation.board (81 squares, 9 * x + y: x
// the file minus one, drawn from the right; y the rank from the top; agent 0's pieces positive:
// 1 pawn, 2 lance, 3 knight, 4 silver, 5 bishop, 6 rook, 7 gold, 8 king, 9-12 promoted pawn to
// silver, 13 horse, 14 dragon), each piece as its kanji, agent 1's turned round; each hand beside
// its owner's side of the board.
var SHOGI_GLYPHS = ["", "\u6B69", "\u9999", "\u6842", "\u9280", "\u89D2", "\u98DB", "\u91D1",
  "\u7389", "\u3068", "\u674F", "\u572D", "\u5168", "\u99AC", "\u9F8D"];
var SHOGI_HAND = ["\u6B69", "\u9999", "\u6842", "\u9280", "\u89D2", "\u98DB", "\u91D1"];

function shogiPiece(ctx, code, cx, cy, size) {
  ctx.save();
  ctx.translate(cx, cy);
  if (code < 0) ctx.rotate(Math.PI);
  ctx.fillStyle = Math.abs(code) > 8 ? "#c62828" : "#212121";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.font = Math.floor(size * 0.7) + "px serif";
  ctx.fillText(SHOGI_GLYPHS[Math.abs(code)] || "?", 0, 0);
  ctx.restore();
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var obs = agents[0].observation || {};
  var board = obs.board || [];
  if (board.length !== 81) board = [];
  var hands = obs.hands || [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]];
  var cell = Math.floor(Math.min(width / 11, height / 10));
  var x0 = Math.floor((width - 9 * cell) / 2);
  var y0 = Math.floor((height - 9 * cell) / 2);
  ctx.fillStyle = "#5d4037";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#e8c77d";
  ctx.fillRect(x0, y0, 9 * cell, 9 * cell);
  ctx.strokeStyle = "#5d4037";
  ctx.lineWidth = 1;
  var cells = [];
  for (var sq = 0; sq < 81; sq++) {
    var x = Math.floor(sq / 9), rank = sq % 9;
    var left = x0 + (8 - x) * cell, top = y0 + rank * cell;
    ctx.strokeRect(left, top, cell, cell);
    var value = board[sq] || 0;
    if (value !== 0) shogiPiece(ctx, value, left + cell / 2, top + cell / 2, cell);
    cells.push({ x: left + cell / 2, y: top + cell / 2, value: value });
  }
  ctx.fillStyle = "#fafafa";
  ctx.font = Math.floor(cell * 0.45) + "px serif";
  ctx.textAlign = "center";
  for (var player = 0; player < 2; player++) {
    var text = "";
    for (var kind = 0; kind < 7; kind++) {
      var count = (hands[player] || [])[kind] || 0;
      if (count > 0) text += SHOGI_HAND[kind] + (count > 1 ? count : "") + " ";
    }
    var y = player === 0 ? y0 + 9 * cell + cell * 0.5 : y0 - cell * 0.35;
    ctx.fillText(text, width / 2, y);
  }
  var status = "";
  if (agents[0].status === "DONE" && agents[1].status === "DONE") {
    status = agents[0].reward > 0 ? "Sente wins" : agents[1].reward > 0 ? "Gote wins" : "Draw";
  } else if (agents[0].status === "ACTIVE") {
    status = "Sente to move";
  } else if (agents[1].status === "ACTIVE") {
    status = "Gote to move";
  } else {
    status = agents[0].status + " / " + agents[1].status;
  }
  if (statusEl) statusEl.textContent = status;
  return { cells: cells };
}
