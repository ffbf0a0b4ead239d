#!/usr/bin/env node
// reinforce.js - pytorch/examples' reinforcement_learning/reinforce.py (REINFORCE on CartPole),
// ported line by line to kindling. gym's CartPole-v1 is ./cartpole.js (the same equations);
// torch.distributions.Categorical is kd.distributions.Categorical.
//
//   node examples/pytorch/reinforcement_learning/reinforce.js                    # until solved
//   node examples/pytorch/reinforcement_learning/reinforce.js --max-episodes 20  # a quick check
'use strict';

const kd = require('../../..');
const { nn, optim } = kd;
const F = nn.functional;
const { Categorical } = kd.distributions;
const gym = require('./cartpole');
const { ArgumentParser } = require('../common/argparse');

function makeParser() {
  const parser = new ArgumentParser({ description: 'PyTorch REINFORCE example' });
  parser.addArgument('--gamma', { type: 'float', default: 0.99, metavar: 'G', help: 'discount factor (default: 0.99)' });
  parser.addArgument('--seed', { type: 'int', default: 543, metavar: 'N', help: 'random seed (default: 543)' });
  parser.addArgument('--render', { action: 'store_true', help: 'render the environment (not available: ignored)' });
  parser.addArgument('--log-interval', { type: 'int', default: 10, metavar: 'N', help: 'interval between training status logs (default: 10)' });
  parser.addArgument('--max-episodes', { type: 'int', default: 0, metavar: 'N', help: 'stop after N episodes (kindling addition; 0: until solved)' });
  return parser;
}

class Policy extends nn.Module {
  constructor() {
    super();
    this.affine1 = new nn.Linear(4, 128);
    this.dropout = new nn.Dropout({ p: 0.6 });
    this.affine2 = new nn.Linear(128, 2);

    this.savedLogProbs = [];
    this.rewards = [];
  }

  forward(x) {
    x = this.affine1(x);
    x = this.dropout(x);
    x = F.relu(x);
    const actionScores = this.affine2(x);
    return F.softmax(actionScores, { dim: 1 });
  }
}

// The program's globals (module-level in the original), made by setup().
const g = { args: null, env: null, policy: null, optimizer: null };
const eps = 1.1920928955078125e-7; // np.finfo(np.float32).eps

function setup(argv) {
  g.args = makeParser().parseArgs(argv);
  g.env = gym.make('CartPole-v1');
  g.env.reset({ seed: g.args.seed });
  kd.manualSeed(g.args.seed);
  g.policy = new Policy();
  g.optimizer = new optim.Adam(g.policy.parameters(), { lr: 1e-2 });
  return g;
}

function selectAction(state) {
  state = kd.tensor(state).float().unsqueeze(0);
  const probs = g.policy(state);
  const m = new Categorical(probs);
  const action = m.sample();
  g.policy.savedLogProbs.push(m.logProb(action));
  return action.item();
}

/** One update from the episode's rewards; returns the loss (for the tests). */
function finishEpisode() {
  const { policy, optimizer, args } = g;
  let R = 0;
  let policyLoss = [];
  let returns = [];
  for (const r of policy.rewards.slice().reverse()) {
    R = r + args.gamma * R;
    returns.unshift(R);
  }
  returns = kd.tensor(returns);
  returns = returns.sub(returns.mean()).div(returns.std().add(eps));
  const R_ = returns.unbind(0);
  policy.savedLogProbs.forEach((logProb, i) => policyLoss.push(logProb.neg().mul(R_[i])));
  optimizer.zeroGrad();
  policyLoss = kd.cat(policyLoss).sum();
  policyLoss.backward();
  optimizer.step();
  policy.rewards.length = 0;
  policy.savedLogProbs.length = 0;
  return policyLoss.item();
}

function main() {
  const { args, env, policy } = g;
  let runningReward = 10;
  for (let iEpisode = 1; ; iEpisode++) {
    let [state] = env.reset();
    let epReward = 0;
    let t;
    for (t = 1; t < 10000; t++) { // Don't infinite loop while learning
      const action = selectAction(state);
      let reward, terminated, truncated;
      [state, reward, terminated, truncated] = env.step(action);
      policy.rewards.push(reward);
      epReward += reward;
      if (terminated || truncated) break;
    }

    runningReward = 0.05 * epReward + (1 - 0.05) * runningReward;
    kd.tidy(() => { finishEpisode(); });
    if (iEpisode % args.logInterval === 0) {
      console.log(`Episode ${iEpisode}\tLast reward: ${epReward.toFixed(2)}\tAverage reward: ${runningReward.toFixed(2)}`);
    }
    if (runningReward > env.spec.rewardThreshold) {
      console.log(`Solved! Running reward is now ${runningReward} and the last episode runs to ${t} time steps!`);
      break;
    }
    if (args.maxEpisodes && iEpisode >= args.maxEpisodes) break;
  }
}

module.exports = { Policy, makeParser, setup, selectAction, finishEpisode, main, globals: g };

if (require.main === module) {
  setup();
  main();
}
