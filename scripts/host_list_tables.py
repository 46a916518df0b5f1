"""What scripts/import-v2fly-hosts and scripts/import-ut1-hosts share: their
mapping file (a source list or category -> our category, one per line) and the
C++ group they write for proxy/app_list.cc ({name, category, patterns})."""

CATEGORIES = ("realtime", "interactive", "web", "streaming", "bulk")
LINE = 118


def read_mapping(path, key):
    """[(`key`, category)] in the file's order: "key<TAB>category  # why"."""
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 2 or fields[1] not in CATEGORIES:
                raise SystemExit(f"{path}:{number}: expected '{key} category' ({'/'.join(CATEGORIES)})")
            out.append((fields[0], fields[1]))
    return out


def group_lines(name, category, patterns):
    """One group's lines: the patterns space-separated in adjacent string literals of at most LINE columns."""
    head = f'{{"{name}", "{category}", "'
    chunks = [patterns[0]]
    for p in patterns[1:]:
        if len(chunks[-1]) + len(p) + 6 + (len(head) if len(chunks) == 1 else 0) > LINE:
            chunks.append(p)
        else:
            chunks[-1] += " " + p
    out = [head + chunks[0] + '"']
    out.extend('  " ' + c + '"' for c in chunks[1:])  # adjacent literals: the space goes inside
    out[-1] += "},"
    return out
