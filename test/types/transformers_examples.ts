// transformers_examples.ts - type test of examples/gpt2 (model.d.ts, generation.d.ts) and examples/bert
// (model.d.ts). Nothing here runs.
import * as kd from 'kindling';
import { GPT2LMHeadModel, KVCache, gpt2Config } from '../../examples/gpt2/model';
import { generate, type GenerateOptions } from '../../examples/gpt2/generation';

declare function use(...xs: unknown[]): void;

async function demo(): Promise<void> {
  const model = new GPT2LMHeadModel({ nLayer: 2, nEmbd: 64, nHead: 4, vocabSize: 97 });
  const opts: GenerateOptions = { maxNewTokens: 8, doSample: true, topK: 10, topP: 0.9, temperature: 0.8, seed: 1, eosTokenId: null };
  const one: number[] = await model.generate([1, 2, 3], opts);
  const rows: number[][] = await model.generate([[1, 2], [3, 4]], opts);
  for await (const t of model.stream([1, 2, 3], opts)) { const n: number = t; use(n); }
  for await (const t of model.stream([[1, 2], [3, 4]])) { const r: number[] = t; use(r); }
  const cache: KVCache = model.makeCache(1, 32);
  const logits: kd.Tensor = model(kd.tensor([[1n, 2n]]), cache, { lastOnly: true });
  use(model(kd.tensor([[0n, 2n]]), null, { attentionMask: kd.tensor([[0, 1]]) }));
  cache.beginFixedShapeDecoding();
  use(cache.fixedShape, cache.fixedShapeMask(), cache.position, await generate(model, [1], { cudaGraph: false }));
  cache.dispose();
  const loaded = GPT2LMHeadModel.fromSafetensors('gpt2.safetensors', gpt2Config({ nLayer: 12 }), { device: 'cpu' });
  use(one, rows, logits, loaded, await generate(model, [1], { maxNewTokens: 2 }), model.transformer.h[0].attn.c_attn.weight);
  // @ts-expect-error topK is a number
  use(model.generate([1], { topK: '3' }));
}
use(demo);

// examples/bert
import { BertModel, bertConfig } from '../../examples/bert/model';
const bert = new BertModel(bertConfig({ numHiddenLayers: 2 }));
const ids = kd.tensor([[101n, 2023n, 102n]]);
const { lastHiddenState, poolerOutput } = bert(ids, { attentionMask: kd.onesLike(ids), tokenTypeIds: null });
use(lastHiddenState, poolerOutput, BertModel.fromSafetensors('bert.safetensors', {}, { device: 'cuda' }).pooler.dense);
// @ts-expect-error attentionMask is a tensor
bert.forward(ids, { attentionMask: [1, 1, 1] });
