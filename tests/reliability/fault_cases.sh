# The fault matrix's cases, sourced by fault_matrix.sh (its helpers: fc,
# fc_bg, lab, line, metric, ...). Each case_N prints one PASS / FAIL line.
# V4 is the server; the WAN faults are tables of their own in the hub's
# namespace (never the gateway's inet ensemble_gw).
# shellcheck shell=bash

server() { echo "10.$N.2.2"; }

wan_rules() {  # wan_rules NAME RULE: RULE on every packet in and out of the hub's WAN veth
  in_ns hub 10 nft -f - <<EOF
table inet egwf_$1 {
  chain in { type filter hook input priority -10; policy accept; iifname "wan0" $2; }
  chain out { type filter hook output priority -10; policy accept; oifname "wan0" $2; }
}
EOF
}
wan_dropped() {  # packets the table's rules dropped
  in_ns hub 10 nft list table inet "egwf_$1" 2>/dev/null |
    awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) } END { print s + 0 }'
}
wan_clear() { in_ns hub 10 nft delete table inet "egwf_$1" 2>/dev/null; }

# ---------------------------------------------------------------- 1
# Killed and restarted at once (as systemd's Restart= does): the branch's
# connection is stale, the new hub knows nothing of it. The running download
# must end in a reset (the branch notices by its silence rekey, at the latest
# by dead_peer_after) and new ones must work.
case_1() {
  local id="1 hub SIGKILLed mid-transfer, restarted" out=$W/c1.out killed took rec
  fc_bg "$out" 60 get "$(server)" 80 "/slow/30000000.bin?seed=k1&seconds=40" 30000000 k1 $((dead_peer_s + slack_s)) reset
  local pid=$bg_pid
  if ! wait_for "$out" receiving 15; then
    line FAIL "$id" "the transfer did not start: $(figures "$out")"
    kill "$pid" 2>/dev/null
    return
  fi
  sleep 1
  killed=$(now)
  lab stop-hub KILL
  sleep 1
  lab start-hub "$bin"
  wait "$pid"
  took=$(since "$killed" "$(field end "$out")")
  rec=$(retry_intact 40 k1r)
  local rec_rc=$?
  if [[ $(field outcome "$out") == reset ]] && at_most "$took" $((dead_peer_s + slack_s)) && ((rec_rc == 0)); then
    line PASS "$id" "hub restarted 1 s after the kill; running download: reset ${took} s after the kill ($(figures "$out" | cut -d';' -f1)); new downloads after the kill: $rec"
  else
    line FAIL "$id" "running download ended ${took} s after the kill, want a reset within $((dead_peer_s + slack_s)) s: $(figures "$out"); after the restart: $rec"
    log_tail
  fi
}

# ---------------------------------------------------------------- 2
case_2() {
  local id="2 branch restarted, temporal cache restored" out=$W/c2.out stopped stop_s up_s loaded resumed
  # An upload first: the branch's own ensemble then has a path worth caching.
  fc 30 put "$(server)" 80 3000000 b2 15 intact >"$W/c2-pre.out" 2>&1
  fc_bg "$out" 40 get "$(server)" 80 "/slow/3000000.bin?seed=b2&seconds=3" 3000000 b2 15 intact
  local pid=$bg_pid
  wait_for "$out" receiving 15
  stopped=$(now)
  lab stop-branch TERM  # drains: the running download may finish
  stop_s=$(since "$stopped" "$(now)")
  wait "$pid"
  local header entries
  header=$(head -n1 "$D/branch.cache" 2>/dev/null)
  entries=$(grep -c '^peer ' "$D/branch.cache" 2>/dev/null)
  up_s=$(restart_branch) || up_s="no tunnel within 15 s"
  loaded=$(grep -o 'temporal cache .*: [0-9]* entries loaded' "$D/branch.log" | tail -n1 | grep -o '[0-9]* entries')
  fc 30 put "$(server)" 80 5000000 b2b 15 intact >"$W/c2-post.out" 2>&1
  local post_rc=$?
  resumed=$(metric_is branch egw_ensemble_resumed_total 1)
  if [[ $(field outcome "$out") == intact && $header == egw-temporal-cache* ]] && ((entries >= 1)) &&
    [[ ${loaded%% *} -ge 1 ]] && ((post_rc == 0 && resumed >= 1)); then
    line PASS "$id" "download running at SIGTERM: $(figures "$out") (drain and exit ${stop_s} s); cache file saved ($entries entries), restarted, tunnel up in ${up_s} s, '$loaded loaded', upload $(figures "$W/c2-post.out"), resumed from the cache: egw_ensemble_resumed_total $resumed"
  else
    line FAIL "$id" "download: $(figures "$out"); cache file '$header' $entries entries; restart: $up_s s, loaded '$loaded'; upload: $(figures "$W/c2-post.out"); egw_ensemble_resumed_total $resumed (want >= 1)"
    log_tail
  fi
}

# ---------------------------------------------------------------- 6
cache_put() {  # cache_put TAG: a checked upload; "ok" or what went wrong
  fc 30 put "$(server)" 80 2000000 "c6$1" 15 intact >"$W/c6$1.out" 2>&1 && echo ok || figures "$W/c6$1.out"
}
case_6() {
  local id="6 cache file corrupt, on a full disk, unreadable" cache=$D/branch.cache bad=() figs=() up t r
  # a) corrupt: the gateway starts with an empty cache and a warning, and
  # its next save replaces the file.
  lab stop-branch
  head -c 400 /dev/urandom >"$cache"
  up=$(restart_branch) || bad+=("corrupt: no tunnel")
  grep -q "is corrupt, starting empty" "$D/branch.log" || bad+=("corrupt: no warning")
  r=$(cache_put a)
  [[ $r == ok ]] || bad+=("corrupt: upload $r")
  lab stop-branch
  [[ $(head -n1 "$cache") == egw-temporal-cache* ]] || bad+=("corrupt: not replaced at exit")
  figs+=("corrupt: warned, tunnel up in ${up} s, upload intact, file rewritten at exit")
  # b) full disk: the file on a 16 KiB tmpfs filled up; the save fails with
  # a warning and leaves the old file whole (atomic write), no temporary left.
  local full=$W/full before after
  mkdir -p "$full"
  if mount -t tmpfs -o size=16k egwf-full "$full"; then
    cp "$cache" "$full/branch.cache"
    dd if=/dev/zero of="$full/fill" bs=1k count=64 2>/dev/null
    before=$(sha256sum <"$full/branch.cache")
    sed -i "s|^  file: .*|  file: $full/branch.cache|" "$D/branch.yaml"
    up=$(restart_branch) || bad+=("full: no tunnel")
    r=$(cache_put b)
    [[ $r == ok ]] || bad+=("full: upload $r")
    lab stop-branch
    after=$(sha256sum <"$full/branch.cache")
    local warned
    warned=$(grep -o "temporal cache: .*" "$D/branch.log" | tail -n1)
    [[ $warned == *"No space left"* ]] || bad+=("full: no warning at exit (last: '$warned')")
    [[ $before == "$after" ]] || bad+=("full: the old file changed")
    ls -A "$full" | grep -q '\.tmp\.' && bad+=("full: a temporary file was left")
    figs+=("full disk: upload intact, save refused ('${warned#temporal cache: }'), old file intact")
    sed -i "s|^  file: .*|  file: $cache|" "$D/branch.yaml"
    umount "$full"
  else
    bad+=("full: cannot mount a tmpfs")
  fi
  # c) unreadable: a directory where the file should be (root reads any
  # file whatever its mode).
  rm -f "$cache"
  mkdir "$cache"
  up=$(restart_branch) || bad+=("unreadable: no tunnel")
  grep -q "not loaded" "$D/branch.log" || bad+=("unreadable: no warning at start")
  r=$(cache_put c)
  [[ $r == ok ]] || bad+=("unreadable: upload $r")
  t=$(grep -c "temporal cache: " "$D/branch.log")
  lab stop-branch
  (($(grep -c "temporal cache: " "$D/branch.log") > t)) || bad+=("unreadable: no warning when the save at exit failed")
  figs+=("unreadable: warned at start ('$(grep -o "not loaded: .*" "$D/branch.log" | tail -n1)') and at exit, tunnel up in ${up} s, upload intact")
  rmdir "$cache"
  restart_branch >/dev/null || bad+=("the branch did not come back")
  if ((${#bad[@]} == 0)); then
    line PASS "$id" "$(printf '%s; ' "${figs[@]}")"
  else
    line FAIL "$id" "$(printf '%s; ' "${bad[@]}")"
    log_tail
  fi
}

# ---------------------------------------------------------------- 7
case_7() {
  local id="7 SIGHUP with a broken config" out=$W/c7.out yaml=$D/branch.yaml pid f0 r0 f1 r1 bad=() why
  pid=$(cat "$D/branch.pid")
  f0=$(metric branch egw_config_reload_failures_total)
  r0=$(metric branch egw_config_reloads_total)
  fc_bg "$out" 40 get "$(server)" 80 "/slow/4000000.bin?seed=h7&seconds=4" 4000000 h7 15 intact
  local cpid=$bg_pid
  wait_for "$out" receiving 15
  cp "$yaml" "$W/good.yaml"
  # A value out of range, then a YAML syntax error (a half-written file).
  printf 'limits:\n  connect_timeout_ms: 5\n' >>"$yaml"
  kill -HUP "$pid"
  wait_for "$D/branch.log" "reload failed, keeping the running config" 5 || bad+=("no log line for the bad value")
  head -c 200 "$W/good.yaml" >"$yaml"
  printf '\npeers: [ {name: hub\n' >>"$yaml"
  kill -HUP "$pid"
  wait_for "$D/branch.log" "reload failed, keeping the running config" 5 2 || bad+=("no log line for the syntax error")
  why=$(grep "reload failed" "$D/branch.log" | head -n1 | cut -d' ' -f3-)
  f1=$(metric_is branch egw_config_reload_failures_total $((f0 + 2)))
  wait "$cpid"
  [[ $(field outcome "$out") == intact ]] || bad+=("the running download: $(figures "$out")")
  fc 30 get "$(server)" 80 "/bytes/2000000.bin?seed=h7b" 2000000 h7b 15 intact >"$W/c7b.out" 2>&1 ||
    bad+=("a new download: $(figures "$W/c7b.out")")
  cp "$W/good.yaml" "$yaml"
  kill -HUP "$pid"
  wait_for "$D/branch.log" "reloaded " 5 || bad+=("the good config did not reload")
  r1=$(metric_is branch egw_config_reloads_total $((r0 + 1)))
  kill -0 "$pid" 2>/dev/null || bad+=("the branch died")
  ((f1 == f0 + 2)) || bad+=("egw_config_reload_failures_total $f0 -> $f1, want +2")
  ((r1 == r0 + 1)) || bad+=("egw_config_reloads_total $r0 -> $r1, want +1")
  if ((${#bad[@]} == 0)); then
    line PASS "$id" "2 broken files rejected: log '$why', egw_config_reload_failures_total $f0 -> $f1; download across both: $(figures "$out"); the good file then reloads (egw_config_reloads_total $r0 -> $r1)"
  else
    line FAIL "$id" "$(printf '%s; ' "${bad[@]}")"
    log_tail
  fi
}

# ---------------------------------------------------------------- 3
case_3() {
  local id="3 WAN down 30 s and back" out=$W/c3.out down_at took during rec open_b open_h
  fc_bg "$out" 90 get "$(server)" 80 "/slow/40000000.bin?seed=w3&seconds=60" 40000000 w3 $((dead_peer_s + slack_s)) reset
  local pid=$bg_pid
  wait_for "$out" receiving 15
  sleep 1
  wan_rules down "counter drop"
  down_at=$(now)
  sleep 20
  # A new connection while the tunnel is down: a reset after connect_timeout.
  fc $((connect_timeout_s + slack_s + 5)) get "$(server)" 80 "/bytes/100000.bin?seed=w3n" 100000 w3n \
    $((connect_timeout_s + slack_s)) reset >"$W/c3-new.out" 2>&1
  local new_rc=$?
  sleep "$(awk -v t="$(since "$down_at" "$(now)")" 'BEGIN { d = 30 - t; print (d > 0 ? d : 0) }')"
  local dropped
  dropped=$(wan_dropped down)
  wan_clear down
  local up_at
  up_at=$(now)
  wait "$pid"
  took=$(since "$down_at" "$(field end "$out")")
  rec=$(retry_intact 30 w3r)
  local rec_rc=$?
  open_b=$(metric_is branch egw_connections_open 0)
  open_h=$(metric_is hub egw_connections_open 0)
  if [[ $(field outcome "$out") == reset ]] && at_most "$took" $((dead_peer_s + slack_s)) && ((new_rc == 0)) &&
    ((rec_rc == 0 && open_b == 0 && open_h == 0)); then
    line PASS "$id" "running download: reset ${took} s after the link went down ($(figures "$out")); new connection during the outage: $(figures "$W/c3-new.out"); link back after $(since "$down_at" "$up_at") s ($dropped packets dropped): $rec; connections open afterwards: branch $open_b, hub $open_h"
  else
    line FAIL "$id" "running download ended ${took} s after the link went down (want a reset within $((dead_peer_s + slack_s)) s): $(figures "$out"); during the outage: $(figures "$W/c3-new.out"); after: $rec; connections open: branch $open_b hub $open_h"
    log_tail
  fi
}

# ---------------------------------------------------------------- 5
case_5() {
  local id="5 loss burst 30 % for 10 s" bad=() figs=() lost0 lost1 dropped f
  lost0=$(($(metric hub egw_ensemble_packets_lost_total) + $(metric branch egw_ensemble_packets_lost_total)))
  fc_bg "$W/c5-slow.out" 90 get "$(server)" 80 "/slow/6000000.bin?seed=l5&seconds=6" 6000000 l5 $((dead_peer_s + slack_s)) intact
  local p1=$bg_pid
  wait_for "$W/c5-slow.out" receiving 15
  wan_rules loss "numgen random mod 100 < 30 counter drop"
  fc_bg "$W/c5-get.out" 90 get "$(server)" 80 "/bytes/10000000.bin?seed=l5b" 10000000 l5b $((dead_peer_s + slack_s)) intact
  local p2=$bg_pid
  fc_bg "$W/c5-put.out" 90 put "$(server)" 80 5000000 l5p $((dead_peer_s + slack_s)) intact
  local p3=$bg_pid
  sleep 10
  dropped=$(wan_dropped loss)
  wan_clear loss
  wait "$p1" "$p2" "$p3"
  lost1=$(($(metric hub egw_ensemble_packets_lost_total) + $(metric branch egw_ensemble_packets_lost_total)))
  for f in slow get put; do
    if [[ $(field outcome "$W/c5-$f.out") == intact ]]; then figs+=("$(figures "$W/c5-$f.out" | cut -d';' -f1)")
    else bad+=("$f: $(figures "$W/c5-$f.out")"); fi
  done
  if ((${#bad[@]} == 0)); then
    line PASS "$id" "$dropped packets dropped, $((lost1 - lost0)) declared lost by the tunnel; paced 6 MB download (started before): ${figs[0]}; 10 MB download: ${figs[1]}; 5 MB upload: ${figs[2]}"
  else
    line FAIL "$id" "$dropped packets dropped: $(printf '%s; ' "${bad[@]}")"
    log_tail
  fi
}

# ---------------------------------------------------------------- 4
case_4() {
  local id="4 NAT rebinding mid-transfer" out=$W/c4.out before port moved back bad=() old_dropped logged
  before=$(peer_address)
  port=${before##*:}
  fc_bg "$out" 40 get "$(server)" 80 "/slow/6000000.bin?seed=n4&seconds=4" 6000000 n4 15 intact
  local pid=$bg_pid
  wait_for "$out" receiving 15
  sleep 0.5
  # The hub now sees the branch as 10.N.0.3:40000 (a stateless rewrite both
  # ways), and the old mapping is gone: what the hub still sends to the old
  # address is dropped.
  in_ns hub 10 nft -f - <<EOF
table ip egwf_nat {
  chain pre { type filter hook prerouting priority -300; policy accept;
    ip saddr 10.$N.0.1 udp sport $port udp dport 51900 notrack ip saddr set 10.$N.0.3 udp sport set 40000
  }
  chain out { type route hook output priority -300; policy accept;
    ip daddr 10.$N.0.1 udp dport $port counter drop
    ip daddr 10.$N.0.3 udp dport 40000 notrack ip daddr set 10.$N.0.1 udp dport set $port
  }
}
EOF
  wait "$pid"
  moved=$(peer_address)
  [[ $(field outcome "$out") == intact ]] || bad+=("the running download: $(figures "$out")")
  [[ $moved == "10.$N.0.3:40000" ]] || bad+=("the hub sends to '$moved', want 10.$N.0.3:40000")
  wait_for "$D/hub.log" "tunnel to branch: now at 10.$N.0.3:40000" 3 || bad+=("no log line for the new address")
  fc 30 get "$(server)" 80 "/bytes/2000000.bin?seed=n4b" 2000000 n4b 15 intact >"$W/c4b.out" 2>&1 ||
    bad+=("after the rebinding: $(figures "$W/c4b.out")")
  old_dropped=$(in_ns hub 10 nft list table ip egwf_nat | grep -o 'packets [0-9]*' | head -n1 | cut -d' ' -f2)
  # The NAT goes away: the branch's own address again (a second rebinding).
  in_ns hub 10 nft delete table ip egwf_nat
  fc 30 get "$(server)" 80 "/bytes/2000000.bin?seed=n4c" 2000000 n4c 15 intact >"$W/c4c.out" 2>&1 ||
    bad+=("back to the old address: $(figures "$W/c4c.out")")
  back=$(peer_address)
  [[ $back == "$before" ]] || bad+=("the hub sends to '$back' after the NAT went, want $before")
  wait_for "$D/hub.log" "tunnel to branch: now at $before" 3 || bad+=("no log line for the address back")
  logged=$(grep -o "tunnel to branch: now at 10.$N.0.3:40000.*" "$D/hub.log" | head -n1)
  if ((${#bad[@]} == 0)); then
    line PASS "$id" "download across the rebinding: $(figures "$out"); the hub followed $before -> $moved ($old_dropped packets to the old address dropped) -> $back, logged '$logged', downloads after each intact"
  else
    line FAIL "$id" "$(printf '%s; ' "${bad[@]}")"
    log_tail
  fi
}

# ---------------------------------------------------------------- 8
case_8() {
  local id="8 a server that accepts and never answers" out=$W/c8.out ends end closed_at seen how open_b open_h
  ends=$(grep -c silent-end "$W/server.log")
  fc 20 silent "$(server)" 7001 6 >"$out" 2>&1
  local rc=$?
  closed_at=$(field end "$out")
  wait_for "$W/server.log" silent-end 5 $((ends + 1))
  end=$(grep silent-end "$W/server.log" | tail -n1)
  open_b=$(metric_is branch egw_connections_open 0)
  open_h=$(metric_is hub egw_connections_open 0)
  read -r _ seen how _ <<<"$end"
  if ((rc == 0)) && [[ $how == eof ]] && at_most "$(since "$closed_at" "$seen")" 3 && ((open_b == 0 && open_h == 0)); then
    line PASS "$id" "client: $(figures "$out" | cut -d';' -f1) (what a direct connection shows; only the client's own timeout ends it); its close reached the server as a FIN $(since "$closed_at" "$seen") s later; connections open then: branch $open_b, hub $open_h"
  else
    line FAIL "$id" "client: $(figures "$out"); server: '${end:-nothing}' (want eof within 3 s of the close); connections open: branch $open_b hub $open_h"
    log_tail
  fi
}

# ---------------------------------------------------------------- 9
case_9() {
  local id="9 a server that resets mid-response" bad=() crc
  fc 30 get "$(server)" 80 "/reset/4000000?seed=r9" 4000000 r9 15 reset >"$W/c9a.out" 2>&1 ||
    bad+=("4 MB: $(figures "$W/c9a.out")")
  # 10 MB in flight when the server resets.
  fc 30 get "$(server)" 80 "/reset/40000000?seed=r9b" 40000000 r9b 15 reset >"$W/c9b.out" 2>&1 ||
    bad+=("40 MB: $(figures "$W/c9b.out")")
  in_ns client 30 curl -sS --max-time 20 -o /dev/null "http://$(server)/reset/4000000?seed=r9c" 2>"$W/c9c.err"
  crc=$?
  ((crc == 56)) || bad+=("curl exit $crc (want 56, a receive error; 18 = a truncated clean EOF)")
  if ((${#bad[@]} == 0)); then
    line PASS "$id" "$(figures "$W/c9a.out" | cut -d';' -f1); $(figures "$W/c9b.out" | cut -d';' -f1); curl exit 56 ($(head -c 60 "$W/c9c.err"))"
  else
    line FAIL "$id" "$(printf '%s; ' "${bad[@]}")"
    log_tail
  fi
}
