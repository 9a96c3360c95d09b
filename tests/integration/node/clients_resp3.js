// Real Node.js clients speaking RESP3 through shardproxy: node-redis 6 with its defaults (HELLO 3
// at connect) and ioredis 6 with protocol 3 and replyMapping "resp3" (maps as objects, doubles as
// numbers). Each client runs the same scenario twice, first against a plain redis-server (the
// reference) and then through the proxy, and every step's result through the proxy must equal the
// reference's. Each step also checks its own RESP3 shapes, so a run against the reference alone
// shows the scenario itself is right.
//
//   node clients_resp3.js PROXY_PORT REFERENCE_PORT SHARD_PORT [SHARD_PORT ...]
//
// The shard ports are the proxy's backends: the BLPOP step waits until the shard reports the
// client blocked, and the MGET step checks its keys really sit on more than one shard. Pointing
// PROXY_PORT and SHARD_PORT at a redis-server runs the scenario without a proxy.
//
// Exits 0 when every check holds, 1 (after printing each mismatch) otherwise.
'use strict';

const assert = require('node:assert/strict');
const util = require('node:util');
const Redis5 = require('ioredis'); // RESP2 helper connections to the servers themselves
const Redis6 = require('ioredis6');
const { createClient } = require('redis6');

const [proxyPort, referencePort, ...shardPorts] = process.argv.slice(2).map(Number);
if (!proxyPort || !referencePort || shardPorts.length === 0) {
  console.error('usage: node clients_resp3.js PROXY_PORT REFERENCE_PORT SHARD_PORT...');
  process.exit(2);
}
const HOST = '127.0.0.1';
const STEP_TIMEOUT_MS = 15000; // a step takes well under a second, but sanitizer builds are slow
const PIPELINE_KEYS = 500; // 500 SET + 500 GET = a pipeline of 1,000 commands
const SCAN_KEYS = 10000;

function withTimeout(promise, ms, what) {
  let timer;
  const expiry = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A one-off RESP2 command straight to a redis-server (a shard or the reference), not a client
// under test.
async function serverCommand(port, ...args) {
  const conn = new Redis5({
    host: HOST, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null,
  });
  conn.on('error', () => {});
  try {
    await conn.connect();
    return await conn.call(...args);
  } finally {
    conn.disconnect();
  }
}

// ---- the two clients, behind one small interface ----
// Every connection a client opens is recorded in `opened` so the scenario can close them all,
// whatever step failed.

const nodeRedis6 = {
  name: 'node-redis 6',
  prefix: 'nr6',
  async connect(port, opened) {
    // Default options: RESP3, so HELLO 3 at connect (with CLIENT SETINFO and
    // CLIENT MAINT_NOTIFICATIONS in the same write).
    const client = createClient({
      socket: { host: HOST, port, reconnectStrategy: false, connectTimeout: 5000 },
    });
    client.on('error', () => {}); // surfaced through the rejected commands instead
    opened.push(() => client.destroy());
    await client.connect();
    return client;
  },
  hello3: (c) => c.hello('3'),
  pipeline: (c, cmds) => {
    const batch = c.multi();
    for (const cmd of cmds) {
      batch.addCommand(cmd);
    }
    return batch.execAsPipeline();
  },
  hset: (c, key, fields) => c.hSet(key, fields),
  hgetall: (c, key) => c.hGetAll(key),
  zadd: (c, key, pairs) => c.zAdd(key, pairs.map(([score, value]) => ({ score, value }))),
  zscore: (c, key, member) => c.zScore(key, member),
  // The raw reply, without node-redis' per-command transform: a RESP3 double is a number here
  // and a map an object, where RESP2 would give a string and a flat array.
  raw: (c, args) => c.sendCommand(args),
  mset: (c, pairs) => c.mSet(pairs),
  mget: (c, keys) => c.mGet(keys),
  async transaction(c, tag) {
    return c
      .multi()
      .set(`${tag}:a`, '1')
      .incr(`${tag}:n`)
      .incr(`${tag}:n`)
      .hSet(`${tag}:h`, { f: 'v' })
      .hGetAll(`${tag}:h`)
      .zAdd(`${tag}:z`, { score: 2.5, value: 'm' })
      .zScore(`${tag}:z`, 'm')
      .get(`${tag}:a`)
      .exec();
  },
  del: (c, keys) => c.del(keys),
  set: (c, key, value) => c.set(key, value),
  get: (c, key) => c.get(key),
  ping: (c) => c.ping(),
  subscribe: (c, channel, onMessage) => c.subscribe(channel, (message) => onMessage(message)),
  unsubscribe: (c, channel) => c.unsubscribe(channel),
  publish: (c, channel, message) => c.publish(channel, message),
  async blpop(c, key, seconds) {
    const got = await c.blPop(key, seconds);
    return got && [got.key, got.element];
  },
  lpush: (c, key, value) => c.lPush(key, value),
  async scanAll(c, match) {
    const keys = [];
    for await (const batch of c.scanIterator({ MATCH: match, COUNT: 500 })) {
      keys.push(...batch);
    }
    return keys;
  },
};

const ioredis6 = {
  name: 'ioredis 6',
  prefix: 'io6',
  async connect(port, opened) {
    // protocol 3 is ioredis 6's default, but it quietly falls back to RESP2 when HELLO 3 is
    // refused; replyMapping "resp3" makes the RESP3 types visible in the replies.
    const client = new Redis6({
      host: HOST,
      port,
      protocol: 3,
      replyMapping: 'resp3',
      lazyConnect: true,
      connectTimeout: 5000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null, // no reconnect loop hiding a failure
    });
    client.on('error', () => {});
    opened.push(() => client.disconnect());
    await client.connect();
    // The fallback is silent (a warning only); the negotiated protocol is only in `condition`.
    assert.equal(client.condition.protocol, 3, 'ioredis fell back to RESP2');
    return client;
  },
  hello3: (c) => c.hello(3),
  async pipeline(c, cmds) {
    const batch = c.pipeline(cmds.map(([name, ...args]) => [name.toLowerCase(), ...args]));
    const results = await batch.exec();
    return results.map(([err, value]) => (err ? `error: ${err.message}` : value));
  },
  hset: (c, key, fields) => c.hset(key, fields),
  hgetall: (c, key) => c.hgetall(key),
  zadd: (c, key, pairs) =>
    c.zadd(key, ...pairs.flatMap(([score, v]) => [score === Infinity ? '+inf' : score, v])),
  zscore: (c, key, member) => c.zscore(key, member),
  raw: (c, args) => c.call(...args),
  mset: (c, pairs) => c.mset(...pairs.flat()),
  mget: (c, keys) => c.mget(keys),
  async transaction(c, tag) {
    const results = await c
      .multi()
      .set(`${tag}:a`, '1')
      .incr(`${tag}:n`)
      .incr(`${tag}:n`)
      .hset(`${tag}:h`, { f: 'v' })
      .hgetall(`${tag}:h`)
      .zadd(`${tag}:z`, 2.5, 'm')
      .zscore(`${tag}:z`, 'm')
      .get(`${tag}:a`)
      .exec();
    return results.map(([err, value]) => (err ? `error: ${err.message}` : value));
  },
  del: (c, keys) => c.del(...keys),
  set: (c, key, value) => c.set(key, value),
  get: (c, key) => c.get(key),
  ping: (c) => c.ping(),
  async subscribe(c, channel, onMessage) {
    c.on('message', (ch, message) => ch === channel && onMessage(message));
    return c.subscribe(channel);
  },
  unsubscribe: (c, channel) => c.unsubscribe(channel),
  publish: (c, channel, message) => c.publish(channel, message),
  blpop: (c, key, seconds) => c.blpop(key, seconds),
  lpush: (c, key, value) => c.lpush(key, value),
  scanAll(c, match) {
    return new Promise((resolve, reject) => {
      const keys = [];
      c.scanStream({ match, count: 500 })
        .on('data', (batch) => keys.push(...batch))
        .on('end', () => resolve(keys))
        .on('error', reject);
    });
  },
};

// ---- the scenario ----
// Each step returns a value that must be the same against the reference and through the proxy;
// anything that legitimately differs (connection ids, versions, SCAN cursors) stays inside the
// step, which checks it and returns only what must match.

function nullProto(obj) {
  // node-redis builds maps with a null prototype; compare contents, not prototypes.
  return obj && typeof obj === 'object' && !Array.isArray(obj) ? { ...obj } : obj;
}

const STEPS = [
  ['connect (HELLO 3 at start-up)', async (cl, t) => {
    t.client = await cl.connect(t.port, t.opened);
    assert.equal(await cl.ping(t.client), 'PONG');
    return 'connected';
  }],
  ['HELLO 3 reports proto 3', async (cl, t) => {
    const hello = nullProto(await cl.hello3(t.client));
    assert.ok(hello && typeof hello === 'object' && !Array.isArray(hello),
      `HELLO 3 reply is a map, not ${util.inspect(hello)}`);
    assert.equal(hello.proto, 3);
    for (const field of ['server', 'version', 'proto', 'id', 'mode', 'role', 'modules']) {
      assert.ok(field in hello, `HELLO 3 reply lacks ${field}: ${util.inspect(hello)}`);
    }
    return { proto: hello.proto, fields: Object.keys(hello).sort() };
  }],
  [`pipeline of ${2 * PIPELINE_KEYS} commands (SET, GET of distinct keys)`, async (cl, t) => {
    const cmds = [];
    const want = [];
    for (let i = 0; i < PIPELINE_KEYS; i += 1) {
      cmds.push(['SET', `${t.prefix}:p:${i}`, `v${i}`]);
      want.push('OK');
    }
    for (let i = 0; i < PIPELINE_KEYS; i += 1) {
      cmds.push(['GET', `${t.prefix}:p:${i}`]);
      want.push(`v${i}`);
    }
    const got = await cl.pipeline(t.client, cmds);
    assert.equal(got.length, want.length, 'reply count');
    const bad = got.findIndex((v, i) => v !== want[i]);
    assert.equal(bad, -1, `reply ${bad} to ${cmds[bad]?.join(' ')}: ${util.inspect(got[bad])}`);
    return got;
  }],
  ['HGETALL (a map)', async (cl, t) => {
    const key = `${t.prefix}:h`;
    await cl.hset(t.client, key, { f1: 'x', f2: 'y', f3: '' });
    const got = nullProto(await cl.hgetall(t.client, key));
    assert.deepEqual(got, { f1: 'x', f2: 'y', f3: '' });
    const raw = await cl.raw(t.client, ['HGETALL', key]);
    assert.ok(!Array.isArray(raw), `raw HGETALL is a RESP3 map, not ${util.inspect(raw)}`);
    const missing = nullProto(await cl.hgetall(t.client, `${t.prefix}:h-missing`));
    assert.deepEqual(missing, {});
    return { got, raw: nullProto(raw), missing };
  }],
  ['ZSCORE (a double)', async (cl, t) => {
    const key = `${t.prefix}:z`;
    await cl.zadd(t.client, key, [[1.5, 'a'], [-0.25, 'b'], [Infinity, 'c']]);
    const got = [];
    for (const member of ['a', 'b', 'c', 'missing']) {
      got.push(await cl.zscore(t.client, key, member));
    }
    assert.deepEqual(got, [1.5, -0.25, Infinity, null]);
    const raw = await cl.raw(t.client, ['ZSCORE', key, 'a']);
    assert.equal(raw, 1.5, `raw ZSCORE is a RESP3 double (a number), not ${util.inspect(raw)}`);
    return { got: got.map(String), raw };
  }],
  ['MGET across shards (missing keys are nulls)', async (cl, t) => {
    const keys = [];
    const pairs = [];
    for (let i = 0; i < 12; i += 1) {
      keys.push(`${t.prefix}:mget:${i}`);
      if (i % 2 === 0) {
        pairs.push([`${t.prefix}:mget:${i}`, `m${i}`]);
      }
    }
    assert.equal(await cl.mset(t.client, pairs), 'OK');
    const got = await cl.mget(t.client, keys);
    assert.deepEqual(got, keys.map((_, i) => (i % 2 === 0 ? `m${i}` : null)));
    if (t.shards.length > 1) {
      const holders = new Set();
      for (const port of t.shards) {
        if ((await serverCommand(port, 'EXISTS', ...keys)) > 0) {
          holders.add(port);
        }
      }
      assert.ok(holders.size > 1, `the MGET keys sit on ${holders.size} shard(s) only`);
    }
    return got;
  }],
  ['MULTI/EXEC on one hash-tagged slot', async (cl, t) => {
    const tag = `{${t.prefix}-tx}`;
    await cl.del(t.client, [`${tag}:a`, `${tag}:n`, `${tag}:h`, `${tag}:z`]);
    const got = (await cl.transaction(t.client, tag)).map(nullProto);
    assert.deepEqual(got, ['OK', 1, 2, 1, { f: 'v' }, 1, 2.5, '1']);
    return got;
  }],
  ['SUBSCRIBE, a PUBLISH from another client, GET on the subscribed connection', async (cl, t) => {
    const channel = `${t.prefix}:chan`;
    const key = `${t.prefix}:while-subscribed`;
    const sub = await cl.connect(t.port, t.opened);
    const pub = await cl.connect(t.port, t.opened);
    assert.equal(await cl.set(pub, key, 'still-answers'), 'OK');
    let delivered;
    const message = new Promise((resolve) => { delivered = resolve; });
    await cl.subscribe(sub, channel, (m) => delivered(m));
    const receivers = await cl.publish(pub, channel, 'hello');
    const got = await withTimeout(message, 5000, 'message delivery');
    // RESP3 lets a subscribed connection run ordinary commands; PING answers +PONG, not the
    // RESP2 subscribed-mode ["pong", ""].
    const value = await cl.get(sub, key);
    const pong = await cl.ping(sub);
    await cl.unsubscribe(sub, channel);
    const after = await cl.get(sub, key);
    const result = { receivers, got, value, pong, after };
    assert.deepEqual(result, {
      receivers: 1, got: 'hello', value: 'still-answers', pong: 'PONG', after: 'still-answers',
    });
    return result;
  }],
  ['BLPOP woken by an LPUSH from another client', async (cl, t) => {
    const key = `${t.prefix}:queue`;
    const blocked = await cl.connect(t.port, t.opened);
    const pusher = await cl.connect(t.port, t.opened);
    await cl.del(pusher, [key]);
    const popped = cl.blpop(blocked, key, 5);
    popped.catch(() => {}); // awaited below; no unhandled rejection meanwhile
    // Push only once the server holding the key has the BLPOP parked.
    const deadline = Date.now() + 5000;
    for (;;) {
      let parked = 0;
      for (const port of t.shards) {
        const info = await serverCommand(port, 'INFO', 'clients');
        parked += Number(/blocked_clients:(\d+)/.exec(info)[1]);
      }
      if (parked > 0) {
        break;
      }
      assert.ok(Date.now() < deadline, 'BLPOP never blocked on the server');
      await sleep(20);
    }
    const pushed = await cl.lpush(pusher, key, 'wake');
    const got = await withTimeout(popped, 5000, 'BLPOP');
    assert.deepEqual({ pushed, got }, { pushed: 1, got: [key, 'wake'] });
    return { pushed, got };
  }],
  [`SCAN MATCH over ${SCAN_KEYS} keys`, async (cl, t) => {
    const written = [];
    for (let i = 0; i < SCAN_KEYS; i += 1) {
      written.push(`${t.prefix}:scan:${i}`);
    }
    for (let i = 0; i < SCAN_KEYS; i += 1000) {
      const cmds = written.slice(i, i + 1000).map((k) => ['SET', k, 'x']);
      const got = await cl.pipeline(t.client, cmds);
      assert.ok(got.every((v) => v === 'OK'), 'SET pipeline');
    }
    const seen = new Set(await cl.scanAll(t.client, `${t.prefix}:scan:*`));
    const missing = written.filter((k) => !seen.has(k));
    const wrote = new Set(written);
    const extra = [...seen].filter((k) => !wrote.has(k));
    assert.deepEqual({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) },
      { missing: [], extra: [] }, `${missing.length} missing, ${extra.length} extra`);
    assert.equal(seen.size, SCAN_KEYS);
    return { distinct: seen.size };
  }],
];

// Runs every step against `port`; returns Map(step name -> {value} or {error}).
async function runScenario(cl, port, shards) {
  const t = { port, shards, prefix: cl.prefix, opened: [], client: null };
  const results = new Map();
  try {
    for (const [name, step] of STEPS) {
      if (name !== STEPS[0][0] && !t.client) {
        results.set(name, { error: 'not run: no connection', notRun: true });
        continue;
      }
      try {
        results.set(name, { value: await withTimeout(step(cl, t), STEP_TIMEOUT_MS, name) });
      } catch (err) {
        results.set(name, { error: errorText(err) });
      }
    }
  } finally {
    for (const close of t.opened) {
      try {
        close();
      } catch (err) {
        // already closed
      }
    }
  }
  return results;
}

let failures = 0;

function show(v) {
  const text = util.inspect(v, { depth: 6, breakLength: 120, maxArrayLength: 8 });
  return text.length > 1500 ? `${text.slice(0, 1500)}...` : text;
}

function errorText(err) {
  const text = err && err.message ? err.message : String(err);
  return text.replace(/\n\s*\n/g, '\n').trim(); // node:assert pads its messages with blank lines
}

async function runClient(cl) {
  const reference = await runScenario(cl, referencePort, [referencePort]);
  const proxied = await runScenario(cl, proxyPort, shardPorts);
  const report = (name, problem) => {
    if (problem) {
      failures += 1;
      console.log(`FAIL ${cl.name}: ${name}: ${problem}`);
    } else {
      console.log(`ok   ${cl.name}: ${name}`);
    }
  };
  for (const [name] of STEPS) {
    const want = reference.get(name);
    const got = proxied.get(name);
    if ('error' in want) {
      report(name, `against the reference redis-server itself: ${want.error}`);
    } else if (got.notRun) {
      report(`${STEPS.length - 1} more steps`, 'not run, no connection');
      break;
    } else if ('error' in got) {
      report(name, got.error);
    } else {
      try {
        assert.deepEqual(got.value, want.value);
        report(name, null);
      } catch (err) {
        report(name, `differs: proxy ${show(got.value)}, redis-server ${show(want.value)}`);
      }
    }
  }
}

async function main() {
  await runClient(nodeRedis6);
  await runClient(ioredis6);
  if (failures > 0) {
    console.log(`node clients (RESP3): ${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('node clients (RESP3): all checks passed');
  process.exit(0);
}

main().catch((err) => {
  console.log(`FAIL unexpected: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
