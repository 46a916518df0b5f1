#!/usr/bin/env python3
"""The other side of tests/crypto/noise_interop_test.cc: a Noise IK / IKpsk2
peer built on the independent `noiseprotocol` package (pip), driven over
stdin/stdout, one hex-encoded message per line.

  noise_interop.py --role initiator|responder --static PRIV_HEX
                   [--remote PUB_HEX] [--expect-remote PUB_HEX] [--psk HEX]
                   [--prologue HEX] [--transport N]

Handshake: message 1 (initiator -> responder), message 2 (back); payloads
are fixed strings both sides check. Then the line "hash <h>" (the handshake
hash). Then N transport messages: the initiator sends payload(i), the
responder checks it and answers reply(i). Any mismatch: a message on stderr
and exit status 1. Finally the line "ok".
"""
import argparse
import sys

try:
    from noise.connection import Keypair, NoiseConnection
except ImportError as error:  # the test names the fix
    sys.stderr.write(f"noise_interop.py: cannot import noiseprotocol ({error}); "
                     "run scripts/noise-interop-env.sh\n")
    sys.exit(3)

PAYLOAD1 = b"interop message 1 from the initiator"
PAYLOAD2 = b"interop message 2 from the responder"


def payload(i: int) -> bytes:
    return bytes((i * 31 + j) % 256 for j in range(i * 50))


def reply(i: int) -> bytes:
    return payload(i)[::-1] + b"!"


def send(data: bytes) -> None:
    sys.stdout.write(data.hex() + "\n")
    sys.stdout.flush()


def receive() -> bytes:
    line = sys.stdin.readline()
    if not line:
        fail("peer closed the pipe")
    return bytes.fromhex(line.strip())


def fail(message: str) -> None:
    sys.stderr.write(f"noise_interop.py: {message}\n")
    sys.exit(1)


def check(what: str, got: bytes, want: bytes) -> None:
    if got != want:
        fail(f"{what}: got {bytes(got).hex()}, want {want.hex()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--role", choices=["initiator", "responder"], required=True)
    parser.add_argument("--static", required=True)
    parser.add_argument("--remote")
    parser.add_argument("--expect-remote")
    parser.add_argument("--psk")
    parser.add_argument("--prologue", default="")
    parser.add_argument("--transport", type=int, default=4)
    args = parser.parse_args()

    name = "Noise_IKpsk2_25519_ChaChaPoly_SHA256" if args.psk else "Noise_IK_25519_ChaChaPoly_SHA256"
    noise = NoiseConnection.from_name(name.encode())
    initiator = args.role == "initiator"
    if initiator:
        noise.set_as_initiator()
        noise.set_keypair_from_public_bytes(Keypair.REMOTE_STATIC, bytes.fromhex(args.remote))
    else:
        noise.set_as_responder()
    noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes.fromhex(args.static))
    if args.psk:
        noise.set_psks(psk=bytes.fromhex(args.psk))
    noise.set_prologue(bytes.fromhex(args.prologue))
    noise.start_handshake()

    if initiator:
        send(noise.write_message(PAYLOAD1))
        check("message 2 payload", noise.read_message(receive()), PAYLOAD2)
    else:
        check("message 1 payload", noise.read_message(receive()), PAYLOAD1)
        if args.expect_remote:
            remote = noise.noise_protocol.handshake_state.rs.public_bytes
            check("initiator's static key", remote, bytes.fromhex(args.expect_remote))
        send(noise.write_message(PAYLOAD2))
    if not noise.handshake_finished:
        fail("handshake not finished after two messages")
    sys.stdout.write("hash " + noise.get_handshake_hash().hex() + "\n")
    sys.stdout.flush()

    for i in range(args.transport):
        if initiator:
            send(noise.encrypt(payload(i)))
            check(f"transport reply {i}", noise.decrypt(receive()), reply(i))
        else:
            check(f"transport message {i}", noise.decrypt(receive()), payload(i))
            send(noise.encrypt(reply(i)))
    sys.stdout.write("ok\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
