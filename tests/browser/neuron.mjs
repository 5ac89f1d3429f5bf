// The NeuronCore tab: the report's `neuron_device` figures (engines, opcodes, DMA) drawn for a
// trace with Neuron device data (the demo's simulated NeuronCore), and no tab for a CUDA trace.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {T, api, openPage, shot} from './harness.mjs';

test('NeuronCore tab: engines, opcodes and DMA as opscope report computes them; none for CUDA', async () => {
  const nd = (await api(`/api/trace/${T.neuron}/summary`)).figures.neuron_device;
  assert.ok(nd && nd.engines.length > 0, 'the demo trace has neuron_device figures');
  const page = await openPage(`trace=${T.neuron}&tab=neuron`);
  await page.waitForSelector('#neuron-engines tbody tr', {timeout: 20000});
  assert.equal(await page.isVisible('#tab-neuron'), true, 'the tab is offered');
  const engines = await page.$$eval('#neuron-engines tbody tr', (rows) => rows.map((r) => [...r.children].map((td) => td.textContent.trim())));
  assert.equal(engines.length, nd.engines.length);
  for (const e of nd.engines) {
    const row = engines.find((r) => r[0] === e.device && r[1] === e.engine);
    assert.ok(row, `engine ${e.device} ${e.engine} is listed: ${JSON.stringify(engines)}`);
    assert.equal(row[2], e.instructions.toLocaleString('en-US'));
    assert.ok(row[5].endsWith(`${(100 * e.utilization).toFixed(2)}%`), `${e.engine} utilization ${row[5]}`);
  }
  const opcodes = await page.$$eval('#neuron-opcodes tbody tr', (rows) => rows.map((r) => r.children[3].textContent));
  assert.equal(opcodes.length, Math.min(30, nd.opcodes.length));
  const top = nd.opcodes.reduce((a, b) => (b.total_ns > a.total_ns ? b : a));
  assert.equal(opcodes[0], top.opcode, 'sorted by total time');
  const dma = await page.textContent('#neuron-dma');
  assert.ok(dma.includes(`${nd.dma.packets.toLocaleString('en-US')} packets on ${nd.dma.queues} queues`), dma);
  await shot(page, 'neuron-tab');
  assert.deepEqual(page.errors, []);
  await page.close();

  const cuda = await openPage(`trace=${T.cuda}&tab=summary`);
  await cuda.waitForSelector('#summary h3', {timeout: 20000});
  assert.equal((await api(`/api/trace/${T.cuda}/summary`)).figures.neuron_device, undefined);
  assert.equal(await cuda.isVisible('#tab-neuron'), false, 'no NeuronCore tab for a CUDA trace');
  await cuda.close();
});
