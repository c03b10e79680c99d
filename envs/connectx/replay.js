// ConnectX replay drawing: a blue board of circles, white when empty, red (mark 1) or yellow
// (mark 2). The board is agent 0's observation.board, flat and row-major with the top row first.
var CONNECTX_FILLS = { 0: "#ffffff", 1: "#e53935", 2: "#fdd835" };
var CONNECTX_COLOUR_NAMES = ["red", "yellow"];

function renderStep({ ctx, width, height, step, steps, configuration, environment, statusEl }) {
  var rows = configuration.rows || 6;
  var columns = configuration.columns || 7;
  var agents = steps[step];
  var board = (agents[0].observation && agents[0].observation.board) || [];
  if (board.length !== rows * columns) board = [];
  var before = step > 0 ? (steps[step - 1][0].observation || {}).board || [] : [];

  var pad = 12;
  var cell = Math.floor(Math.min((width - 2 * pad) / columns, (height - 2 * pad) / rows));
  var x0 = Math.floor((width - cell * columns) / 2);
  var y0 = Math.floor((height - cell * rows) / 2);
  var radius = cell * 0.4;

  ctx.fillStyle = "#263238";
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = "#1565c0";
  ctx.fillRect(x0, y0, cell * columns, cell * rows);

  var cells = [];
  for (var r = 0; r < rows; r++) {
    for (var c = 0; c < columns; c++) {
      var i = r * columns + c;
      var cx = x0 + c * cell + cell / 2;
      var cy = y0 + r * cell + cell / 2;
      var value = board[i] || 0;
      ctx.beginPath();
      ctx.arc(cx, cy, radius, 0, 2 * Math.PI);
      ctx.fillStyle = CONNECTX_FILLS[value] || "#ffffff";
      ctx.fill();
      if (value && before.length === board.length && !before[i]) {
        // The checker dropped in this step gets a dark rim.
        ctx.lineWidth = Math.max(2, cell * 0.05);
        ctx.strokeStyle = "#212121";
        ctx.stroke();
      }
      cells.push([cx, cy]);
    }
  }

  statusEl.textContent = turnStatus(agents, function (k) {
    return playerName(environment, k) + " (" + CONNECTX_COLOUR_NAMES[k] + ")";
  });
  return { cells: cells, rows: rows, columns: columns };
}
