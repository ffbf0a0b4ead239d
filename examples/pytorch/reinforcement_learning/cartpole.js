// cartpole.js - gym's CartPole-v1 (gymnasium/envs/classic_control/cartpole.py) in JS, for the
// ports of pytorch/examples' reinforcement_learning programs: the same constants, the same Euler
// step, the same termination (|x| > 2.4 or |theta| > 12 degrees), reward 1 per step, and the
// TimeLimit of CartPole-v1 (truncated after 500 steps; spec.rewardThreshold 475). The state is
// kept in float64 and observations are Float32Arrays (gym returns float32 numpy arrays).
// reset() draws the state uniformly from [-0.05, 0.05) as gym does, but from a small seeded
// generator of its own (gym's PCG64 stream is not reproduced): same distribution, other numbers.
// tools/fixtures/pytorch_examples/cartpole.py is the same environment in Python.
'use strict';

class CartPoleEnv {
  constructor() {
    this.gravity = 9.8;
    this.masscart = 1.0;
    this.masspole = 0.1;
    this.totalMass = this.masspole + this.masscart;
    this.length = 0.5; // actually half the pole's length
    this.polemassLength = this.masspole * this.length;
    this.forceMag = 10.0;
    this.tau = 0.02; // seconds between state updates
    this.thetaThresholdRadians = 12 * 2 * Math.PI / 360;
    this.xThreshold = 2.4;
    this.maxEpisodeSteps = 500;
    this.spec = { id: 'CartPole-v1', rewardThreshold: 475.0, maxEpisodeSteps: 500 };
    this.state = null;
    this._seed = 0x9e3779b9;
    this._elapsed = 0;
    this._stepsBeyondTerminated = null;
  }

  _uniform(lo, hi) { // mulberry32
    let t = (this._seed = (this._seed + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return lo + (hi - lo) * (((t ^ (t >>> 14)) >>> 0) / 4294967296);
  }

  /** [observation, info]; {seed} reseeds the generator first. */
  reset({ seed } = {}) {
    if (seed !== undefined && seed !== null) this._seed = seed >>> 0;
    this.state = [0, 1, 2, 3].map(() => this._uniform(-0.05, 0.05));
    this._elapsed = 0;
    this._stepsBeyondTerminated = null;
    return [Float32Array.from(this.state), {}];
  }

  /** [observation, reward, terminated, truncated, info] after pushing left (0) or right (1). */
  step(action) {
    if (action !== 0 && action !== 1) throw new RangeError(`${action} (${typeof action}) invalid: the actions are 0 and 1`);
    if (this.state === null) throw new Error('Call reset before using step method.');
    let [x, xDot, theta, thetaDot] = this.state;
    const force = action === 1 ? this.forceMag : -this.forceMag;
    const costheta = Math.cos(theta);
    const sintheta = Math.sin(theta);
    const temp = (force + this.polemassLength * thetaDot ** 2 * sintheta) / this.totalMass;
    const thetaacc = (this.gravity * sintheta - costheta * temp) /
      (this.length * (4.0 / 3.0 - this.masspole * costheta ** 2 / this.totalMass));
    const xacc = temp - this.polemassLength * thetaacc * costheta / this.totalMass;
    x = x + this.tau * xDot; // euler
    xDot = xDot + this.tau * xacc;
    theta = theta + this.tau * thetaDot;
    thetaDot = thetaDot + this.tau * thetaacc;
    this.state = [x, xDot, theta, thetaDot];

    const terminated = x < -this.xThreshold || x > this.xThreshold ||
      theta < -this.thetaThresholdRadians || theta > this.thetaThresholdRadians;
    let reward;
    if (!terminated) {
      reward = 1.0;
    } else if (this._stepsBeyondTerminated === null) {
      this._stepsBeyondTerminated = 0; // pole just fell
      reward = 1.0;
    } else {
      this._stepsBeyondTerminated += 1;
      reward = 0.0;
    }
    this._elapsed += 1;
    const truncated = this._elapsed >= this.maxEpisodeSteps;
    return [Float32Array.from(this.state), reward, terminated, truncated, {}];
  }
}

/** gym.make('CartPole-v1'). */
function make(id) {
  if (id !== 'CartPole-v1') throw new RangeError(`make(${JSON.stringify(id)}): only CartPole-v1 is available`);
  return new CartPoleEnv();
}

module.exports = { CartPoleEnv, make };
