#!/usr/bin/env python3
"""fleet-synth.py: writes N synthetic run summaries for the fleet-report benchmark.

Usage: scripts/fleet-synth.py BASE.json OUTDIR N [SEED]

Each copy of the real summary BASE.json gets its own host name (host-0001, ...), IOPS and
MB/s scaled by a random factor, and its own latency histogram: the run total's HdrHistogram V2
(base64, stats.total.latency_hdr) is decoded, its counts scaled and jittered and its values
shifted by a random number of buckets, and encoded again. Every tenth host is a "slow" one
(IOPS x0.3, latencies shifted further), so the outlier analysis has work to do.
"""
import base64
import copy
import json
import os
import random
import struct
import sys

V2_COOKIES = (0x1C849303, 0x1C849313)  # the base cookie, and with the 8-byte word flag (Rust's)
HEADER = ">iiiiqqd"  # cookie, payload length, normalizing offset, sig. digits, lowest, highest, ratio


def leb_zigzag_decode(buf):
    out, i = [], 0
    while i < len(buf):
        shift, value = 0, 0
        while True:
            b = buf[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        out.append((value >> 1) ^ -(value & 1))
    return out


def leb_zigzag_encode(values):
    out = bytearray()
    for v in values:
        z = (v << 1) ^ (v >> 63)
        z &= (1 << 64) - 1
        while True:
            b = z & 0x7F
            z >>= 7
            if z:
                out.append(b | 0x80)
            else:
                out.append(b)
                break
    return bytes(out)


def decode_counts(b64):
    raw = base64.b64decode(b64)
    head = struct.unpack_from(HEADER, raw)
    if head[0] not in V2_COOKIES:
        raise SystemExit("not an uncompressed HdrHistogram V2 serialization")
    counts = []
    for v in leb_zigzag_decode(raw[40:40 + head[1]]):
        counts.extend([0] * -v if v < 0 else [v])
    return head, counts


def encode_counts(head, counts):
    while counts and counts[-1] == 0:
        counts.pop()
    values, zeros = [], 0
    for c in counts:
        if c == 0:
            zeros += 1
            continue
        if zeros:
            values.append(-zeros) if zeros > 1 else values.append(0)
            zeros = 0
        values.append(c)
    payload = leb_zigzag_encode(values)
    header = struct.pack(HEADER, head[0], len(payload), *head[2:])
    return base64.b64encode(header + payload).decode()


def vary(head, counts, rng, slow):
    # Shifting by 64 indices in the upper half of a bucket multiplies values by about 1.3.
    shift = rng.randrange(0, 64) + (256 if slow else 0)
    scale = rng.uniform(0.5, 3.0)
    out = [0] * shift + [int(c * scale * rng.uniform(0.8, 1.2)) for c in counts]
    return encode_counts(head, out)


def main():
    base_path, out_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    base = json.load(open(base_path))
    head, counts = decode_counts(base["stats"]["total"]["latency_hdr"])
    for i in range(1, n + 1):
        doc = copy.deepcopy(base)
        host = f"host-{i:04d}"
        slow = i % 10 == 0
        doc["host"] = {"hostname": host, "machine_id": f"{i:032x}"}
        total = doc["stats"]["total"]
        f = rng.uniform(0.9, 1.1) * (0.3 if slow else 1.0)
        total["iops"] *= f
        total["mb_per_s"] *= f
        for fl in doc["stats"]["files"]:
            fl["io"]["iops"] *= f
            fl["io"]["mb_per_s"] *= f
        total["latency_hdr"] = vary(head, counts, rng, slow)
        d = os.path.join(out_dir, host)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "summary.json"), "w") as out:
            json.dump(doc, out)


if __name__ == "__main__":
    main()
