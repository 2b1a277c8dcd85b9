"""A hostile hosted bot in Python (hosted/tests/components.rs): what it does is the whole
update, one word.

- loop: never ends (its fuel runs out)
- memory: allocates without end (its memory budget runs out)
- socket, file, udp: connects a TCP socket, reads /etc/passwd, sends a UDP datagram; prints
  the error it gets, then answers 0
- sleep: sleeps an hour, prints how long the clock says it slept, answers 0
- raise: raises ValueError
- chatty: prints 100 KiB on stderr, answers 0
"""

import socket
import sys
import time

import wit_world


class WitWorld(wit_world.WitWorld):
    def decide(self, update: str) -> str:
        if update == "loop":
            while True:
                pass
        if update == "memory":
            hoard = []
            while True:
                hoard.append(bytearray(1 << 20))
        if update == "socket":
            try:
                socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("10.0.0.1", 80))
                print("socket connected", file=sys.stderr)
            except Exception as e:
                print(f"socket refused: {e!r}", file=sys.stderr)
        if update == "file":
            try:
                with open("/etc/passwd") as f:
                    print(f"file read: {f.read()[:20]}", file=sys.stderr)
            except Exception as e:
                print(f"file refused: {e!r}", file=sys.stderr)
        if update == "udp":
            try:
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.0.0.1", 53))
                print("udp sent", file=sys.stderr)
            except Exception as e:
                print(f"udp refused: {e!r}", file=sys.stderr)
        if update == "sleep":
            started = time.monotonic()
            time.sleep(3600)
            print(f"slept: {time.monotonic() - started}", file=sys.stderr)
        if update == "raise":
            raise ValueError("a bot's bug")
        if update == "chatty":
            for _ in range(100):
                print("x" * 1023, file=sys.stderr)
        return "0"
