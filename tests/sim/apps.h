// Applications on top of tunnel streams, for scenario tests:
//  - BulkTransfer (bulk_transfer.h): N bytes in one direction, bytes over time;
//  - WebClient / WebServer (web.h): E-TCP's page model, per-object timings.
// Both check every received byte against stream_content.h.
#pragma once

#include "tests/sim/bulk_transfer.h"
#include "tests/sim/stream_content.h"
#include "tests/sim/web.h"
