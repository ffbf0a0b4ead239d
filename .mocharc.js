// .mocharc.js - mocha's settings for the CPU suite: every test file when none is named, only the
// named ones otherwise (`npx mocha test/data.test.js`, `npm test -- test/data.test.js`): a spec in
// the settings would be added to the files named on the command line, not replaced by them.
'use strict';
const named = process.argv.slice(2).some((a) => /\.test\.js$/.test(a));
module.exports = { timeout: 20000, ...(named ? {} : { spec: 'test/**/*.test.js' }) };
