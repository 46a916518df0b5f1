#!/usr/bin/env python3
"""A server that accepts every connection and never answers or closes it
(netns_hog_test.sh): what the hog's idle connections reach. It reads and
discards what comes; a client's FIN or reset is noted, the server's side
stays open (a server that keeps idle connections until its own timeout,
longer than the test). One thread, epoll: tens of thousands of connections.

  usage: hold_server.py PORT     prints "ready", then runs until killed
"""
import resource
import selectors
import socket
import sys


def main(port):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    listener = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.bind(("::", port))
    listener.listen(4096)
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    print("ready", flush=True)
    held = []
    while True:
        for key, _ in sel.select():
            s = key.fileobj
            if s is listener:
                while True:
                    try:
                        c, _ = listener.accept()
                    except (BlockingIOError, OSError):
                        break
                    c.setblocking(False)
                    sel.register(c, selectors.EVENT_READ)
                    held.append(c)
                continue
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:  # EOF or reset: stop watching, keep our side open
                sel.unregister(s)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(int(sys.argv[1]))
