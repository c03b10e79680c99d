// Animal shogi replay drawing: the 3x4 board from agent 0's observation.board (4 * column + row,
// row 0 at the top, column 0 drawn on the right as Pgx draws it; agent 0's pieces positive:
// 1 chick, 2 elephant, 3 giraffe, 4 lion, 5 hen), each piece a tile with its letter, agent 1's
// turned round; each hand beside its owner's side of the board.
var ANIMAL_LETTERS = ["", "C", "E", "G", "L", "H"];
var ANIMAL_TILES = ["", "#ffe082", "#ce93d8", "#a5d6a7", "#ffab91", "#f48fb1"];

function animalTile(ctx, code, cx, cy, size) {
  var kind = Math.abs(code);
  ctx.save();
  ctx.translate(cx, cy);
  if (code < 0) ctx.rotate(Math.PI);
  ctx.fillStyle = code > 0 ? "#212121" : "#c62828";
  ctx.fillRect(-size * 0.42, -size * 0.42, size * 0.84, size * 0.84);
  ctx.fillStyle = ANIMAL_TILES[kind] || "#ffffff";
  ctx.fillRect(-size * 0.38, -size * 0.38, size * 0.76, size * 0.76);
  ctx.fillStyle = "#212121";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.font = Math.floor(size * 0.45) + "px sans-serif";
  ctx.fillText(ANIMAL_LETTERS[kind] || "?", 0, 0);
  ctx.restore();
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var obs = agents[0].observation || {};
  var board = obs.board || [];
  if (board.length !== 12) board = [];
  var hands = obs.hands || [[0, 0, 0], [0, 0, 0]];
  var cell = Math.floor(Math.min(width / 5, height / 6));
  var x0 = Math.floor((width - 3 * cell) / 2);
  var y0 = Math.floor((height - 4 * cell) / 2);
  ctx.fillStyle = "#6d4c41";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#e8d5a3";
  ctx.fillRect(x0, y0, 3 * cell, 4 * cell);
  ctx.strokeStyle = "#6d4c41";
  ctx.lineWidth = 2;
  var cells = [];
  for (var sq = 0; sq < 12; sq++) {
    var column = Math.floor(sq / 4), row = sq % 4;
    var left = x0 + (2 - column) * cell, top = y0 + row * cell;
    ctx.strokeRect(left, top, cell, cell);
    var value = board[sq] || 0;
    if (value !== 0) animalTile(ctx, value, left + cell / 2, top + cell / 2, cell);
    cells.push({ x: left + cell / 2, y: top + cell / 2, value: value });
  }
  for (var player = 0; player < 2; player++) {
    var x = player === 0 ? x0 + 3 * cell + cell * 0.4 : x0 - cell * 0.4;
    var y = player === 0 ? y0 + 4 * cell - cell * 0.3 : y0 + cell * 0.3;
    for (var kind = 0; kind < 3; kind++) {
      for (var n = 0; n < ((hands[player] || [])[kind] || 0); n++) {
        animalTile(ctx, (kind + 1) * (player === 0 ? 1 : -1), x, y, cell * 0.55);
        y += player === 0 ? -cell * 0.55 : cell * 0.55;
      }
    }
  }
  var text = "";
  if (agents[0].status === "DONE" && agents[1].status === "DONE") {
    text = agents[0].reward > 0 ? "First player wins" : agents[1].reward > 0 ? "Second player wins" : "Draw";
  } else if (agents[0].status === "ACTIVE") {
    text = "First player to move";
  } else if (agents[1].status === "ACTIVE") {
    text = "Second player to move";
  } else {
    text = agents[0].status + " / " + agents[1].status;
  }
  if (statusEl) statusEl.textContent = text;
  return { cells: cells };
}
