// data.js - word_language_model/data.py of pytorch/examples, line for line: a Dictionary of
// words and a Corpus that reads train.txt, valid.txt and test.txt of a folder, one int64 tensor
// of word ids per file, each line's words followed by '<eos>'.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert');
const kd = require('../../..');

class Dictionary {
  constructor() {
    this.word2idx = new Map();
    this.idx2word = [];
  }

  addWord(word) {
    if (!this.word2idx.has(word)) {
      this.idx2word.push(word);
      this.word2idx.set(word, this.idx2word.length - 1);
    }
    return this.word2idx.get(word);
  }

  get length() {
    return this.idx2word.length;
  }
}

// Python's str.split(): runs of whitespace separate words, none at either end.
const split = (line) => line.split(/\s+/).filter((w) => w !== '');

// The lines of a text file as Python's `for line in f` gives them (the last one may lack '\n').
function lines(text) {
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

class Corpus {
  constructor(dir) {
    this.dictionary = new Dictionary();
    this.train = this.tokenize(path.join(dir, 'train.txt'));
    this.valid = this.tokenize(path.join(dir, 'valid.txt'));
    this.test = this.tokenize(path.join(dir, 'test.txt'));
  }

  /** Tokenizes a text file. */
  tokenize(file) {
    assert(fs.existsSync(file), `${file} does not exist`);
    const text = fs.readFileSync(file, 'utf8');
    // Add words to the dictionary
    for (const line of lines(text)) {
      const words = [...split(line), '<eos>'];
      for (const word of words) this.dictionary.addWord(word);
    }

    // Tokenize file content
    return kd.tidy(() => {
      const idss = [];
      for (const line of lines(text)) {
        const words = [...split(line), '<eos>'];
        const ids = [];
        for (const word of words) ids.push(this.dictionary.word2idx.get(word));
        idss.push(kd.tensor(ids).type('int64'));
      }
      return kd.cat(idss);
    });
  }
}

module.exports = { Dictionary, Corpus };
