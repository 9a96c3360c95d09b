#!/usr/bin/python3
"""Check that a shardproxy routes every key to the shard that already holds it.

Before clients move from twemproxy, Codis or Predixy to shardproxy, start shardproxy with the
new configuration on a spare port, beside the running proxy and in front of the same shards, and
run this against it. From each shard it samples up to --sample keys (SCAN, read straight from the
shard) and asks the proxy `EXISTS key` for each one. A key the proxy does not find is routed to a
shard that does not hold it: it is misplaced. Before counting a key as misplaced it is looked up
on its shard again, so keys that expire or are deleted while the check runs are reported apart
("gone"), not as misplaced.

Exit status: 0 when every sampled key was found through the proxy; 1 when any key is misplaced;
2 when the check could not be made (a connection or AUTH failure, error replies from the proxy,
or no key on any shard). See docs/migrating.md.

Needs python3-redis (Debian). Keys are handled as bytes, so binary keys are checked exactly.
"""

import argparse
import os
import sys
import time

import redis

SCAN_COUNT = 1000          # keys asked of every SCAN call
MAX_SCAN_CALLS = 10000     # per shard; SCAN may return few keys per call on a sparse table
MAX_EXAMPLES = 5           # misplaced keys printed per shard
EXIT_OK, EXIT_MISPLACED, EXIT_CANNOT_CHECK = 0, 1, 2


class CheckError(Exception):
    """The check could not be made: the message says why, the exit status is 2."""


def parse_address(text: str) -> tuple:
    """'host:port' or '[v6]:port' -> (host, port)."""
    text = text.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise argparse.ArgumentTypeError(f"bad address '{text}': expected [v6addr]:port")
        port_text = rest[1:]
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep or not host:
            raise argparse.ArgumentTypeError(f"bad address '{text}': expected host:port")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise argparse.ArgumentTypeError(f"bad port in '{text}': expected 1..65535")
    return host, int(port_text)


def show_address(address: tuple) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def show_key(key: bytes) -> str:
    """A key as printable text: printable ASCII as is, every other byte as \\xNN."""
    out = []
    for byte in key:
        if byte in (0x22, 0x5C):  # " and \
            out.append("\\" + chr(byte))
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\x{byte:02x}")
    return '"' + "".join(out) + '"'


def connect(address: tuple, password, what: str, timeout_s: float) -> redis.Redis:
    host, port = address
    conn = redis.Redis(host=host, port=port, password=password or None, db=0,
                       socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                       decode_responses=False)
    try:
        conn.ping()
    except (redis.AuthenticationError, redis.ResponseError) as err:  # NOAUTH, WRONGPASS, ...
        hint = " (give --password or set REDISCLI_AUTH)" if not password else ""
        raise CheckError(f"{what} {show_address(address)}: PING answered: {err}{hint}") from err
    except redis.RedisError as err:
        raise CheckError(f"{what} {show_address(address)}: cannot connect: {err}") from err
    return conn


def sample_keys(shard: redis.Redis, wanted: int) -> list:
    """Up to `wanted` distinct keys of the shard's db 0, in SCAN order (the table's hash order)."""
    keys = []
    seen = set()
    cursor = 0
    for _ in range(MAX_SCAN_CALLS):
        cursor, batch = shard.scan(cursor=cursor, count=SCAN_COUNT)
        for key in batch:
            if key not in seen:
                seen.add(key)
                keys.append(key)
                if len(keys) == wanted:
                    return keys
        if int(cursor) == 0:
            break
    return keys


def exists_each(conn: redis.Redis, keys: list, batch: int) -> list:
    """EXISTS for every key, one key per command, pipelined `batch` at a time. Each answer is
    1, 0 or the error reply (an exception object)."""
    answers = []
    for start in range(0, len(keys), batch):
        pipe = conn.pipeline(transaction=False)
        for key in keys[start:start + batch]:
            pipe.exists(key)
        answers.extend(pipe.execute(raise_on_error=False))
    return answers


class ShardResult:
    def __init__(self, address: tuple):
        self.address = address
        self.sampled = 0
        self.found = 0
        self.misplaced = []   # keys the shard still holds but the proxy does not find
        self.gone = 0         # keys that left the shard during the check (expired, deleted)
        self.errors = []      # error replies from the proxy


def check_shard(address, shard, proxy, sample, batch) -> ShardResult:
    result = ShardResult(address)
    keys = sample_keys(shard, sample)
    result.sampled = len(keys)
    answers = exists_each(proxy, keys, batch)
    not_found = []
    for key, answer in zip(keys, answers):
        if isinstance(answer, Exception):
            result.errors.append(str(answer))
        elif answer == 1:
            result.found += 1
        else:
            not_found.append(key)
    # A key missing through the proxy counts as misplaced only while its shard still has it.
    for key, answer in zip(not_found, exists_each(shard, not_found, batch)):
        if answer == 1:
            result.misplaced.append(key)
        else:
            result.gone += 1
    return result


def report(results: list) -> tuple:
    name_width = max([len("shard")] + [len(show_address(r.address)) for r in results])
    header = f"{'shard':<{name_width}}  {'sampled':>8}  {'found through the proxy':>23}  " \
             f"{'misplaced':>9}"
    print(header)
    for r in results:
        print(f"{show_address(r.address):<{name_width}}  {r.sampled:>8}  {r.found:>23}  "
              f"{len(r.misplaced):>9}")
    for r in results:
        where = show_address(r.address)
        if r.sampled == 0:
            print(f"note: {where} holds no keys in db 0: nothing of it was checked")
        if r.gone:
            print(f"note: {where}: {r.gone} sampled keys left the shard during the check "
                  f"(expired or deleted); not counted as misplaced")
        if r.errors:
            print(f"error: {where}: {len(r.errors)} keys got an error reply from the proxy, "
                  f"first: {r.errors[0]}")
        for key in r.misplaced[:MAX_EXAMPLES]:
            print(f"misplaced: {show_key(key)} is on {where}, the proxy does not find it")
        if len(r.misplaced) > MAX_EXAMPLES:
            print(f"misplaced: ... and {len(r.misplaced) - MAX_EXAMPLES} more on {where}")
    sampled = sum(r.sampled for r in results)
    misplaced = sum(len(r.misplaced) for r in results)
    errors = sum(len(r.errors) for r in results)
    print(f"{sampled} keys sampled, {misplaced} misplaced")
    return sampled, misplaced, errors


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Check, before clients switch to shardproxy, that a shardproxy started with "
                    "the new configuration finds every key where the shards already hold it. "
                    "Samples keys straight from each shard (SCAN COUNT 1000) and sends EXISTS "
                    "for each one through the proxy; a key the proxy does not find is misplaced.",
        epilog="Exit status: 0 = 0 misplaced; 1 = some keys misplaced; 2 = the check could not be "
               "made (connection or AUTH failure, error replies, no keys at all). "
               "The password may also come from the environment variable REDISCLI_AUTH, which "
               "keeps it out of the process list. Example: tools/check-placement.py --proxy "
               "127.0.0.1:6390 --shards 10.0.0.1:6379,10.0.0.2:6379")
    parser.add_argument("--proxy", required=True, type=parse_address, metavar="HOST:PORT",
                        help="the shardproxy started with the new configuration, not yet "
                             "serving clients")
    parser.add_argument("--shard", action="append", default=[], type=parse_address,
                        metavar="HOST:PORT", help="a shard (its primary); repeat for every shard")
    parser.add_argument("--shards", action="append", default=[], metavar="H:P,H:P,...",
                        help="the shards as one comma-separated list")
    parser.add_argument("--sample", type=int, default=1000, metavar="N",
                        help="keys sampled per shard (default 1000)")
    parser.add_argument("--password", default=None,
                        help="AUTH password for the proxy and the shards (default: "
                             "$REDISCLI_AUTH, else none)")
    parser.add_argument("--proxy-password", default=None, metavar="PASSWORD",
                        help="AUTH password for the proxy only, when it differs")
    parser.add_argument("--shard-password", default=None, metavar="PASSWORD",
                        help="AUTH password for the shards only, when it differs")
    parser.add_argument("--batch", type=int, default=500, metavar="N",
                        help="EXISTS commands per pipeline (default 500)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                        help="connect and reply timeout of every call (default 5)")
    args = parser.parse_args(argv)
    for item in args.shards:
        for part in item.split(","):
            if part.strip():
                try:
                    args.shard.append(parse_address(part))
                except argparse.ArgumentTypeError as err:
                    parser.error(f"--shards: {err}")
    if not args.shard:
        parser.error("give the shards: --shard HOST:PORT (repeatable) or --shards H:P,H:P")
    if len(set(args.shard)) != len(args.shard):
        parser.error("a shard is listed twice")
    if args.proxy in args.shard:
        parser.error("--proxy is one of the shards: give the address shardproxy listens on")
    if not 1 <= args.sample <= 10_000_000:
        parser.error("--sample must be 1..10000000")
    if not 1 <= args.batch <= 100_000:
        parser.error("--batch must be 1..100000")
    if not 0 < args.timeout <= 3600:
        parser.error("--timeout must be more than 0 and at most 3600 seconds")
    return args


def main(argv) -> int:
    args = parse_args(argv)
    password = args.password if args.password is not None else os.environ.get("REDISCLI_AUTH")
    proxy_password = args.proxy_password if args.proxy_password is not None else password
    shard_password = args.shard_password if args.shard_password is not None else password
    started = time.monotonic()
    results = []
    try:
        proxy = connect(args.proxy, proxy_password, "proxy", args.timeout)
        shards = [(a, connect(a, shard_password, "shard", args.timeout)) for a in args.shard]
        for address, shard in shards:
            try:
                results.append(check_shard(address, shard, proxy, args.sample, args.batch))
            except redis.RedisError as err:
                raise CheckError(f"while checking shard {show_address(address)}: {err}") from err
    except CheckError as err:
        print(f"check-placement: {err}", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    sampled, misplaced, errors = report(results)
    print(f"checked in {time.monotonic() - started:.1f} s")
    if misplaced:
        return EXIT_MISPLACED
    if errors:
        print("check-placement: some keys could not be checked (error replies above)",
              file=sys.stderr)
        return EXIT_CANNOT_CHECK
    if sampled == 0:
        print("check-placement: no shard holds any key: nothing was checked", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
