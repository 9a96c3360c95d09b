// Real Node.js clients through shardproxy: ioredis and node-redis (the `redis` package) each
// connect with their default start-up sequence, pipeline ~100 commands over keys spread across
// every shard, run a MULTI/EXEC transaction on one hash-tagged slot, and see a transaction that
// spans slots refused. Every key written must then sit on exactly one shard (checked directly).
//
//   node clients.js PROXY_PORT SHARD_PORT [SHARD_PORT ...]
//
// Exits 0 when every check holds, 1 (after printing each mismatch) otherwise.
'use strict';

const assert = require('node:assert/strict');
const Redis = require('ioredis');
const { createClient } = require('redis');

const [proxyPort, ...shardPorts] = process.argv.slice(2).map(Number);
if (!proxyPort || shardPorts.length === 0) {
  console.error('usage: node clients.js PROXY_PORT SHARD_PORT [SHARD_PORT ...]');
  process.exit(2);
}
const HOST = '127.0.0.1';
const KEYS = 30; // per client: 30 SET + 30 INCRBY + 30 GET + MGET, DEL, EXISTS ... ≈ 100 commands

let failures = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    failures += 1;
    console.log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`);
  }
}

// The ~100 commands of one pipeline, as [command, ...args], and the replies they must get.
function pipelinePlan(prefix) {
  const cmds = [];
  const want = [];
  const keys = [];
  for (let i = 0; i < KEYS; i += 1) {
    const key = `${prefix}:k${i}`;
    keys.push(key);
    cmds.push(['SET', key, `v${i}`]);
    want.push('OK');
  }
  for (let i = 0; i < KEYS; i += 1) {
    cmds.push(['INCRBY', `${prefix}:n${i}`, String(i)]);
    want.push(i);
  }
  for (let i = 0; i < KEYS; i += 1) {
    cmds.push(['GET', keys[i]]);
    want.push(`v${i}`);
  }
  // Multi-key commands split across shards and merged by the proxy.
  cmds.push(['MGET', ...keys.slice(0, 10), `${prefix}:missing`]);
  want.push([...keys.slice(0, 10).map((_, i) => `v${i}`), null]);
  cmds.push(['EXISTS', ...keys.slice(0, 20)]);
  want.push(20);
  cmds.push(['DEL', ...keys.slice(20, 25)]);
  want.push(5);
  cmds.push(['MSET', `${prefix}:m1`, 'a', `${prefix}:m2`, 'b', `${prefix}:m3`, 'c']);
  want.push('OK');
  cmds.push(['MGET', `${prefix}:m1`, `${prefix}:m2`, `${prefix}:m3`]);
  want.push(['a', 'b', 'c']);
  cmds.push(['PING']);
  want.push('PONG');
  cmds.push(['ECHO', 'hello']);
  want.push('hello');
  cmds.push(['HSET', `${prefix}:h`, 'f1', 'x', 'f2', 'y']);
  want.push(2);
  cmds.push(['HGETALL', `${prefix}:h`]);
  want.push(null); // client-specific shape, checked separately
  // Keys that survive the pipeline: k0..k19, k25..k29, n1..n29 (INCRBY 0 still creates n0), m1-3, h.
  const live = new Set([...keys.slice(0, 20), ...keys.slice(25)]);
  for (let i = 0; i < KEYS; i += 1) {
    live.add(`${prefix}:n${i}`);
  }
  [`${prefix}:m1`, `${prefix}:m2`, `${prefix}:m3`, `${prefix}:h`].forEach((k) => live.add(k));
  return { cmds, want, live };
}

function checkPipelineReplies(got, want, hgetall) {
  assert.equal(got.length, want.length, 'reply count');
  for (let i = 0; i < want.length - 1; i += 1) {
    assert.deepEqual(got[i], want[i], `reply ${i}`);
  }
  hgetall(got[want.length - 1]);
}

async function runIoredis() {
  const client = new Redis({
    host: HOST,
    port: proxyPort,
    connectionName: 'ioredis-test', // CLIENT SETNAME at connect
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null, // no reconnect loop hiding a failure
  });
  client.on('error', () => {}); // surfaced through the rejected commands instead
  const live = new Set();
  try {
    await check('ioredis: connect (ready check: INFO)', async () => {
      await client.connect();
      assert.equal(client.status, 'ready');
      assert.equal(await client.client('GETNAME'), 'ioredis-test');
    });
    await check('ioredis: pipeline of ~100 commands', async () => {
      const plan = pipelinePlan('io');
      // ioredis takes [method, ...args]: its methods are the lower-case command names.
      const results = await client
        .pipeline(plan.cmds.map(([name, ...args]) => [name.toLowerCase(), ...args]))
        .exec();
      for (const [err] of results) {
        assert.equal(err, null, `pipeline error: ${err}`);
      }
      checkPipelineReplies(
        results.map(([, value]) => value),
        plan.want,
        (h) => assert.deepEqual(h, { f1: 'x', f2: 'y' }), // ioredis turns HGETALL into an object
      );
      plan.live.forEach((k) => live.add(k));
    });
    await check('ioredis: MULTI/EXEC on one hash-tagged slot', async () => {
      const results = await client
        .multi()
        .set('{io-tx}:a', '1')
        .incr('{io-tx}:counter')
        .incrby('{io-tx}:counter', 41)
        .hset('{io-tx}:h', 'field', 'value')
        .rpush('{io-tx}:list', 'x', 'y', 'z')
        .get('{io-tx}:a')
        .lrange('{io-tx}:list', 0, -1)
        .exec();
      assert.deepEqual(results, [
        [null, 'OK'],
        [null, 1],
        [null, 42],
        [null, 1],
        [null, 3],
        [null, '1'],
        [null, ['x', 'y', 'z']],
      ]);
      assert.equal(await client.get('{io-tx}:counter'), '42');
      ['{io-tx}:a', '{io-tx}:counter', '{io-tx}:h', '{io-tx}:list'].forEach((k) => live.add(k));
    });
    await check('ioredis: a transaction across slots aborts (CROSSSLOT)', async () => {
      let error = null;
      try {
        await client.multi().set('{io-x}:a', '1').set('{io-y}:b', '2').exec();
      } catch (err) {
        error = err;
      }
      assert.ok(error, 'exec must fail');
      assert.match(String(error.message), /EXECABORT/);
      const queued = (error.previousErrors || []).map((e) => e.message).join(' | ');
      assert.match(queued, /CROSSSLOT/);
      assert.equal(await client.exists('{io-x}:a', '{io-y}:b'), 0);
    });
    await check('ioredis: WATCH sees a change and EXEC returns null', async () => {
      assert.equal(await client.watch('{io-w}:k'), 'OK');
      const other = new Redis({ host: HOST, port: proxyPort, lazyConnect: true });
      await other.connect();
      await other.set('{io-w}:k', 'changed');
      await other.quit();
      assert.equal(await client.multi().set('{io-w}:k', 'mine').exec(), null);
      assert.equal(await client.get('{io-w}:k'), 'changed');
      live.add('{io-w}:k');
    });
  } finally {
    client.disconnect();
  }
  return live;
}

async function runNodeRedis() {
  const client = createClient({
    socket: { host: HOST, port: proxyPort, reconnectStrategy: false },
    name: 'node-redis-test', // CLIENT SETNAME at connect (and CLIENT SETINFO, when sent)
  });
  client.on('error', () => {});
  const live = new Set();
  try {
    await check('node-redis: connect', async () => {
      await client.connect();
      assert.equal(await client.ping(), 'PONG');
      assert.equal(await client.clientGetName(), 'node-redis-test');
      // node-redis ignores an error reply to its start-up CLIENT SETINFO, so ask again and look.
      assert.equal(await client.sendCommand(['CLIENT', 'SETINFO', 'LIB-NAME', 'node-redis']), 'OK');
      assert.equal(await client.sendCommand(['CLIENT', 'SETINFO', 'LIB-VER', '4.7.1']), 'OK');
      const hello = await client.sendCommand(['HELLO', '2']);
      assert.deepEqual(hello.slice(0, 2), ['server', 'redis']);
      // No HELLO 3 here: node-redis 4 parses RESP2 only, and once the proxy accepts HELLO 3 the
      // map it answers leaves this client waiting forever. clients_resp3.js covers RESP3.
    });
    await check('node-redis: pipeline of ~100 commands', async () => {
      const plan = pipelinePlan('nr');
      // node-redis writes every command issued in one tick as one batch on the socket.
      const replies = await Promise.all(plan.cmds.map((c) => client.sendCommand(c)));
      checkPipelineReplies(replies, plan.want, (h) => assert.deepEqual(h, ['f1', 'x', 'f2', 'y']));
      plan.live.forEach((k) => live.add(k));
      // And the explicit pipeline API.
      const batch = client.multi();
      for (let i = 0; i < 10; i += 1) {
        batch.set(`nr:p${i}`, String(i));
        batch.get(`nr:p${i}`);
        live.add(`nr:p${i}`);
      }
      const got = await batch.execAsPipeline();
      const want = [];
      for (let i = 0; i < 10; i += 1) {
        want.push('OK', String(i));
      }
      assert.deepEqual(got, want);
    });
    await check('node-redis: MULTI/EXEC on one hash-tagged slot', async () => {
      const results = await client
        .multi()
        .set('{nr-tx}:a', '1')
        .incr('{nr-tx}:counter')
        .incrBy('{nr-tx}:counter', 41)
        .hSet('{nr-tx}:h', 'field', 'value')
        .rPush('{nr-tx}:list', ['x', 'y', 'z'])
        .get('{nr-tx}:a')
        .lRange('{nr-tx}:list', 0, -1)
        .exec();
      assert.deepEqual(results, ['OK', 1, 42, 1, 3, '1', ['x', 'y', 'z']]);
      assert.equal(await client.get('{nr-tx}:counter'), '42');
      ['{nr-tx}:a', '{nr-tx}:counter', '{nr-tx}:h', '{nr-tx}:list'].forEach((k) => live.add(k));
    });
    await check('node-redis: a transaction across slots aborts (CROSSSLOT)', async () => {
      let error = null;
      try {
        await client.multi().set('{nr-x}:a', '1').set('{nr-y}:b', '2').exec();
      } catch (err) {
        error = err;
      }
      assert.ok(error, 'exec must fail');
      assert.match(String(error.message || error), /EXECABORT|CROSSSLOT/);
      assert.equal(await client.exists(['{nr-x}:a', '{nr-y}:b']), 0);
    });
  } finally {
    await client.disconnect().catch(() => {});
  }
  return live;
}

// Every key the clients left must be on exactly one shard, and the proxy's DBSIZE (summed over
// the shards) must count them all.
async function checkShards(live) {
  await check(`keys: ${live.size} keys, each on exactly one of ${shardPorts.length} shards`, async () => {
    const seen = new Map();
    let total = 0;
    for (const port of shardPorts) {
      const shard = new Redis({ host: HOST, port, lazyConnect: true });
      await shard.connect();
      const keys = await shard.keys('*');
      total += keys.length;
      for (const k of keys) {
        seen.set(k, (seen.get(k) || 0) + 1);
      }
      shard.disconnect();
    }
    for (const k of live) {
      assert.equal(seen.get(k), 1, `key ${k} on ${seen.get(k) || 0} shards`);
    }
    assert.equal(total, live.size, 'no stray keys on the shards');
    const proxy = new Redis({ host: HOST, port: proxyPort, lazyConnect: true });
    await proxy.connect();
    assert.equal(await proxy.dbsize(), live.size);
    proxy.disconnect();
  });
}

async function main() {
  const live = new Set([...(await runIoredis()), ...(await runNodeRedis())]);
  if (failures === 0) {
    await checkShards(live);
  }
  if (failures > 0) {
    console.log(`node clients: ${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('node clients: all checks passed');
  process.exit(0);
}

main().catch((err) => {
  console.log(`FAIL unexpected: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
