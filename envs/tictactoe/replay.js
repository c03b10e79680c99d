// TicTacToe replay drawing: a 3x3 grid of white cells; X (mark 1) is a blue cross and O (mark 2)
// a red disc, both solid through the cell centre. The board is agent 0's observation.board.
var TICTACTOE_GLYPHS = ["X", "O"];

function tictactoePlayerName(environment, k) {
  var names = (environment.info && environment.info.TeamNames) || [];
  return names[k] || "Player " + (k + 1);
}

function tictactoeStatus(agents, environment) {
  var label = function (k) {
    return tictactoePlayerName(environment, k) + " (" + TICTACTOE_GLYPHS[k] + ")";
  };
  for (var k = 0; k < agents.length; k++) {
    if (agents[k].status === "ACTIVE") return label(k) + " to move";
  }
  var faults = [];
  for (k = 0; k < agents.length; k++) {
    var s = agents[k].status;
    if (s !== "DONE" && s !== "INACTIVE") faults.push(k);
  }
  var parts = faults.map(function (i) { return label(i) + ": " + agents[i].status; });
  var r0 = agents[0].reward, r1 = agents[1].reward;
  if (faults.length === 1 && agents.length === 2) {
    parts.push(label(1 - faults[0]) + " wins");
  } else if (typeof r0 === "number" && typeof r1 === "number" && r0 !== r1) {
    parts.push(label(r0 > r1 ? 0 : 1) + " wins");
  } else if (!faults.length) {
    parts.push("Draw");
  }
  return parts.join(" \u2014 ");
}

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

  statusEl.textContent = tictactoeStatus(agents, environment);
  return { cells: cells, rows: 3, columns: 3 };
}
