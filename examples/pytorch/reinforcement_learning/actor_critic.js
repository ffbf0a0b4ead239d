#!/usr/bin/env node
// actor_critic.js - pytorch/examples' reinforcement_learning/actor_critic.py (one network with
// an actor head and a critic head on CartPole), ported line by line to kindling. gym's
// CartPole-v1 is ./cartpole.js (the same equations); torch.distributions.Categorical is
// kd.distributions.Categorical.
//
//   node examples/pytorch/reinforcement_learning/actor_critic.js                    # until solved
//   node examples/pytorch/reinforcement_learning/actor_critic.js --max-episodes 20  # a quick check
'use strict';

const kd = require('../../..');
const { nn, optim } = kd;
const F = nn.functional;
const { Categorical } = kd.distributions;
const gym = require('./cartpole');
const { ArgumentParser } = require('../common/argparse');

// Cart Pole

function makeParser() {
  const parser = new ArgumentParser({ description: 'PyTorch actor-critic example' });
  parser.addArgument('--gamma', { type: 'float', default: 0.99, metavar: 'G', help: 'discount factor (default: 0.99)' });
  parser.addArgument('--seed', { type: 'int', default: 543, metavar: 'N', help: 'random seed (default: 543)' });
  parser.addArgument('--render', { action: 'store_true', help: 'render the environment (not available: ignored)' });
  parser.addArgument('--log-interval', { type: 'int', default: 10, metavar: 'N', help: 'interval between training status logs (default: 10)' });
  parser.addArgument('--max-episodes', { type: 'int', default: 0, metavar: 'N', help: 'stop after N episodes (kindling addition; 0: until solved)' });
  return parser;
}

const SavedAction = (logProb, value) => ({ logProb, value });

/** implements both actor and critic in one model */
class Policy extends nn.Module {
  constructor() {
    super();
    this.affine1 = new nn.Linear(4, 128);

    // actor's layer
    this.actionHead = new nn.Linear(128, 2);

    // critic's layer
    this.valueHead = new nn.Linear(128, 1);

    // action & reward buffer
    this.savedActions = [];
    this.rewards = [];
  }

  /** forward of both actor and critic */
  forward(x) {
    x = F.relu(this.affine1(x));

    // actor: choses action to take from state s_t
    // by returning probability of each action
    const actionProb = F.softmax(this.actionHead(x), { dim: -1 });

    // critic: evaluates being in the state s_t
    const stateValues = this.valueHead(x);

    // return values for both actor and critic as a tuple of 2 values:
    // 1. a list with the probability of each action over the action space
    // 2. the value from state s_t
    return [actionProb, stateValues];
  }
}

// The program's globals (module-level in the original), made by setup().
const g = { args: null, env: null, model: null, optimizer: null };
const eps = 1.1920928955078125e-7; // np.finfo(np.float32).eps

function setup(argv) {
  g.args = makeParser().parseArgs(argv);
  g.env = gym.make('CartPole-v1');
  g.env.reset({ seed: g.args.seed });
  kd.manualSeed(g.args.seed);
  g.model = new Policy();
  g.optimizer = new optim.Adam(g.model.parameters(), { lr: 3e-2 });
  return g;
}

function selectAction(state) {
  state = kd.tensor(state).float();
  const [probs, stateValue] = g.model(state);

  // create a categorical distribution over the list of probabilities of actions
  const m = new Categorical(probs);

  // and sample an action using the distribution
  const action = m.sample();

  // save to action buffer
  g.model.savedActions.push(SavedAction(m.logProb(action), stateValue));

  // the action to take (left or right)
  return action.item();
}

/** Training code. Calculates actor and critic loss and performs backprop; returns the loss (for the tests). */
function finishEpisode() {
  const { model, optimizer, args } = g;
  let R = 0;
  const savedActions = model.savedActions;
  const policyLosses = []; // list to save actor (policy) loss
  const valueLosses = []; // list to save critic (value) loss
  let returns = []; // list to save the true values

  // calculate the true value using rewards returned from the environment
  for (const r of model.rewards.slice().reverse()) {
    // calculate the discounted value
    R = r + args.gamma * R;
    returns.unshift(R);
  }

  returns = kd.tensor(returns);
  returns = returns.sub(returns.mean()).div(returns.std().add(eps));

  savedActions.forEach(({ logProb, value }, i) => {
    const R_ = returns.select(0, i);
    const advantage = R_.item() - value.item();

    // calculate actor (policy) loss
    policyLosses.push(logProb.neg().mul(advantage));

    // calculate critic (value) loss using L1 smooth loss
    valueLosses.push(F.smoothL1Loss(value, kd.tensor([R_.item()])));
  });

  // reset gradients
  optimizer.zeroGrad();

  // sum up all the values of policyLosses and valueLosses
  const loss = kd.stack(policyLosses).sum().add(kd.stack(valueLosses).sum());

  // perform backprop
  loss.backward();
  optimizer.step();

  // reset rewards and action buffer
  model.rewards.length = 0;
  model.savedActions.length = 0;
  return loss.item();
}

function main() {
  const { args, env, model } = g;
  let runningReward = 10;

  // run infinitely many episodes
  for (let iEpisode = 1; ; iEpisode++) {
    // reset environment and episode reward
    let [state] = env.reset();
    let epReward = 0;

    // for each episode, only run 9999 steps so that we don't
    // infinite loop while learning
    let t;
    for (t = 1; t < 10000; t++) {
      // select action from policy
      const action = selectAction(state);

      // take the action
      let reward, terminated, truncated;
      [state, reward, terminated, truncated] = env.step(action);

      model.rewards.push(reward);
      epReward += reward;
      if (terminated || truncated) break;
    }

    // update cumulative reward
    runningReward = 0.05 * epReward + (1 - 0.05) * runningReward;

    // perform backprop
    kd.tidy(() => { finishEpisode(); });

    // log results
    if (iEpisode % args.logInterval === 0) {
      console.log(`Episode ${iEpisode}\tLast reward: ${epReward.toFixed(2)}\tAverage reward: ${runningReward.toFixed(2)}`);
    }

    // check if we have "solved" the cart pole problem
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
