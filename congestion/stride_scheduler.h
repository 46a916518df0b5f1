// Which member of an ensemble sends the next packet.
//
// Stride scheduling (Waldspurger & Weihl 1995, as used by E-TCP): every member
// holds tickets; its stride is kStride1 / tickets; the eligible member with the
// smallest pass sends and its pass advances by its stride. Over many packets a
// member's share is tickets / sum(tickets), and the error is at most one packet.
// "How much may be sent" is the controller's business (Ensemble); this class
// only answers "who sends next".
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>

#include "common/content_class.h"
#include "common/units.h"

namespace egw::congestion {

using MemberId = StreamId;

enum class SchedulingPolicy {
  fair,     // one ticket each
  content,  // tickets by content class (E-TCP: HTML 12, Java 6, image 3, FTP 1)
  decay,    // 16 tickets, halved after the 5th, 10th, 20th and 40th packet
  preempt,  // E-TCP HTML-pre: the preempt class strictly first, others by content
};

struct SchedulerConfig {
  SchedulingPolicy policy = SchedulingPolicy::content;
  // Indexed by ContentClass.
  std::array<std::uint32_t, kContentClassCount> class_tickets{12, 6, 3, 1};
  ContentClass preempt_class = ContentClass::html;
  std::uint32_t decay_initial_tickets = 16;
  // After sending this many packets a member's tickets halve (never below 1).
  std::array<std::uint32_t, 4> decay_after_packets{5, 10, 20, 40};
};

class StrideScheduler {
 public:
  explicit StrideScheduler(const SchedulerConfig& config = {});

  void add(MemberId id, ContentClass cls);
  void remove(MemberId id);
  // Classes are often learned after a stream's first bytes; takes effect on
  // the member's next packet without giving it back-credit.
  void set_class(MemberId id, ContentClass cls);
  // Policies may change while members run (admin reload).
  void set_config(const SchedulerConfig& config);

  // The eligible member (eligible(id) == true) that should send next, or
  // nullopt when none is eligible. Does not advance anything.
  std::optional<MemberId> pick(const std::function<bool(MemberId)>& eligible) const;
  // Charge `id` for one packet it sent.
  void on_sent(MemberId id);

  std::uint32_t tickets(MemberId id) const;
  std::size_t size() const;
  bool contains(MemberId id) const;

 private:
  // (implementer: private state goes here)
  SchedulerConfig config_;
};

}  // namespace egw::congestion
