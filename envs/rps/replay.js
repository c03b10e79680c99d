// Rock Paper Scissors replay drawing: the two signs of the round as coloured boxes with their
// names, and the running score. In step t, agent 0's sign is agent 1's
// observation.lastOpponentAction and agent 1's sign is agent 0's (absent at step 0).
var RPS_SIGNS = [
  ["Rock", "#795548"],
  ["Paper", "#fafafa"],
  ["Scissors", "#9e9e9e"],
  ["Spock", "#3949ab"],
  ["Lizard", "#43a047"],
];
var RPS_EMPTY = "#37474f";
var RPS_FAULT = "#424242";

function rpsScore(agent) {
  var obs = agent.observation || {};
  if (typeof obs.reward === "number") return obs.reward;
  return typeof agent.reward === "number" ? agent.reward : 0;
}

function rpsIsFault(status) {
  return status !== "ACTIVE" && status !== "DONE" && status !== "INACTIVE";
}

function renderStep({ ctx, width, height, step, steps, environment, statusEl }) {
  var agents = steps[step];
  var signs = [0, 1].map(function (k) {
    var obs = agents[1 - k].observation || {};
    var sign = obs.lastOpponentAction;
    return step > 0 && typeof sign === "number" && RPS_SIGNS[sign] ? sign : null;
  });

  ctx.fillStyle = "#263238";
  ctx.fillRect(0, 0, width, height);

  var size = Math.floor(Math.min(width / 3, height / 2));
  var centreY = Math.floor(height / 2) - 10;
  var boxes = [];
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (var k = 0; k < 2; k++) {
    var cx = Math.floor(width * (k === 0 ? 0.25 : 0.75));
    var fault = rpsIsFault(agents[k].status);
    var fill = fault ? RPS_FAULT : signs[k] === null ? RPS_EMPTY : RPS_SIGNS[signs[k]][1];
    var name = fault ? agents[k].status : signs[k] === null ? "\u2014" : RPS_SIGNS[signs[k]][0];
    ctx.fillStyle = fill;
    ctx.fillRect(cx - size / 2, centreY - size / 2, size, size);
    ctx.lineWidth = 2;
    ctx.strokeStyle = "#eceff1";
    ctx.strokeRect(cx - size / 2, centreY - size / 2, size, size);
    ctx.fillStyle = "#eceff1";
    ctx.font = "bold 18px sans-serif";
    ctx.fillText(playerName(environment, k), cx, centreY - size / 2 - 22);
    ctx.font = "20px sans-serif";
    ctx.fillText(name, cx, centreY + size / 2 + 24);
    ctx.fillText(String(rpsScore(agents[k])), cx, centreY + size / 2 + 54);
    boxes.push([cx, centreY]);
  }
  ctx.font = "bold 24px sans-serif";
  ctx.fillStyle = "#eceff1";
  ctx.fillText("vs", width / 2, centreY);

  var text = "Round " + step + ": ";
  var faults = [0, 1].filter(function (i) { return rpsIsFault(agents[i].status); });
  if (faults.length) {
    text += faults.map(function (i) {
      return playerName(environment, i) + " " + agents[i].status;
    }).join(", ");
  } else if (signs[0] === null || signs[1] === null) {
    text += "no signs yet";
  } else {
    text += RPS_SIGNS[signs[0]][0] + " vs " + RPS_SIGNS[signs[1]][0];
  }
  text += " \u2014 score " + rpsScore(agents[0]) + " : " + rpsScore(agents[1]);
  var over = agents.every(function (a) { return a.status !== "ACTIVE"; });
  if (over) {
    var r0 = agents[0].reward, r1 = agents[1].reward;
    if (typeof r0 === "number" && typeof r1 === "number" && r0 !== r1) {
      text += " \u2014 " + playerName(environment, r0 > r1 ? 0 : 1) + " wins";
    } else if (typeof r0 === "number" && r0 === r1) {
      text += " \u2014 draw";
    }
  }
  statusEl.textContent = text;
  return { boxes: boxes };
}
