// The model of one direction of link_sim's simulated link: when each byte is delivered, and the bytes
// waiting. Time is an argument everywhere, never read from a clock: link_sim passes steady_clock's time since
// it started, the tests pass the numbers they want, so every delivery time is exact and checkable without
// waiting.
//
// The link: bytes that reach its sending end at time t (one read) are cut into chunks of at most chunk_bytes
// (its packets), and each chunk is delivered whole at
//     delivery = max(t + latency, delivery of the previous chunk) + chunk size / bandwidth
// so a chunk waits for the one-way latency, then for the chunks before it to leave the wire, then for its own
// serialisation. The end of the stream is a chunk of no bytes: delivered after every byte before it, and
// never before t + latency. Bandwidth 0 means no throttling (serialisation takes no time).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace linksim {

using Nanos = std::chrono::nanoseconds;

struct LinkParams {
  Nanos latency{0};                  // one way: half the round trip
  std::int64_t bits_per_second = 0;  // 0: no throttling
  std::size_t chunk_bytes = 1500;    // the most one chunk (a packet) carries; at least 1
};

// How long `bytes` take on a wire of `bits_per_second`, rounded up to the nanosecond (0 when unthrottled).
// Exact in 64 bits for chunks up to 1 GiB.
inline Nanos serialisation_time(std::size_t bytes, std::int64_t bits_per_second) {
  if (bits_per_second <= 0 || bytes == 0) return Nanos{0};
  const std::int64_t bits_ns = static_cast<std::int64_t>(bytes) * 8 * 1'000'000'000;
  return Nanos{(bits_ns + bits_per_second - 1) / bits_per_second};
}

// The schedule alone: one chunk in, its delivery time out. Arrivals are expected in time order (a later
// arrival earlier than the previous one is still delivered after it: the link keeps order).
class LinkSchedule {
 public:
  explicit LinkSchedule(const LinkParams& params) : m_params(params) {}

  // The time a chunk of `bytes` that reached the sending end at `arrival` is delivered, whole.
  Nanos chunk(std::size_t bytes, Nanos arrival) {
    const Nanos start = std::max(arrival + m_params.latency, m_previous_end);
    m_previous_end = start + serialisation_time(bytes, m_params.bits_per_second);
    return m_previous_end;
  }
  // The time the end of the stream, reaching the sending end at `arrival`, is delivered.
  Nanos eof(Nanos arrival) { return chunk(0, arrival); }

  const LinkParams& params() const { return m_params; }

 private:
  LinkParams m_params;
  Nanos m_previous_end = Nanos::min();  // the delivery of the previous chunk (none yet: no constraint)
};

// One direction with its bytes: what link_sim keeps between reading an input and writing an output.
// push() schedules what was read; due() shows what may be written at a time; consume() removes what was
// written (any prefix of what is due, so a short write leaves the rest of a chunk due).
class LinkQueue {
 public:
  struct Span {
    const std::uint8_t* data;
    std::size_t size;
  };

  explicit LinkQueue(const LinkParams& params) : m_schedule(params) {}

  // `n` bytes that reached the sending end at `now`, cut into chunks and scheduled. Ignored after push_eof().
  void push(const void* data, std::size_t n, Nanos now) {
    if (m_eof) return;
    const auto* p = static_cast<const std::uint8_t*>(data);
    const std::size_t step = std::max<std::size_t>(1, m_schedule.params().chunk_bytes);
    for (std::size_t at = 0; at < n; at += step) {
      const std::size_t size = std::min(step, n - at);
      Chunk c;
      c.due = m_schedule.chunk(size, now);
      c.bytes.assign(p + at, p + at + size);
      m_chunks.push_back(std::move(c));
      m_pending += size;
    }
  }
  // The end of the stream reached the sending end at `now` (once; later calls change nothing).
  void push_eof(Nanos now) {
    if (!m_eof) m_eof = m_schedule.eof(now);
  }

  // The bytes due by `now` from the head of the queue, at most `max_bytes` of them, in order.
  std::vector<Span> due(Nanos now, std::size_t max_bytes = SIZE_MAX) const {
    std::vector<Span> out;
    for (const Chunk& c : m_chunks) {
      if (c.due > now || max_bytes == 0) break;
      const std::size_t size = std::min(c.bytes.size() - c.done, max_bytes);
      out.push_back({c.bytes.data() + c.done, size});
      max_bytes -= size;
    }
    return out;
  }
  // Some byte is due by `now`.
  bool has_due(Nanos now) const { return !m_chunks.empty() && m_chunks.front().due <= now; }
  // How many bytes are due by `now`.
  std::size_t due_bytes(Nanos now) const {
    std::size_t n = 0;
    for (const Span& s : due(now)) n += s.size;
    return n;
  }
  // Removes the first `n` bytes (the caller wrote them; at most what due() showed).
  void consume(std::size_t n) {
    m_pending -= std::min(n, m_pending);
    m_delivered += n;
    while (n > 0 && !m_chunks.empty()) {
      Chunk& c = m_chunks.front();
      const std::size_t take = std::min(n, c.bytes.size() - c.done);
      c.done += take;
      n -= take;
      if (c.done == c.bytes.size()) m_chunks.pop_front();
    }
  }
  // The time of the next delivery: the first waiting chunk's, or the end of the stream's when no byte waits;
  // nothing when nothing waits.
  std::optional<Nanos> next_due() const {
    if (!m_chunks.empty()) return m_chunks.front().due;
    return m_eof;
  }
  // The time of the last delivery scheduled: the last chunk's, or the end of the stream's once pushed.
  std::optional<Nanos> last_due() const {
    if (m_eof) return m_eof;
    if (!m_chunks.empty()) return m_chunks.back().due;
    return std::nullopt;
  }
  // Every byte was delivered and the end of the stream is due by `now`.
  bool eof_due(Nanos now) const { return m_chunks.empty() && m_eof && *m_eof <= now; }
  bool eof_pushed() const { return m_eof.has_value(); }

  std::size_t pending_bytes() const { return m_pending; }        // pushed, not yet consumed
  std::uint64_t delivered_bytes() const { return m_delivered; }  // consumed so far
  // Forgets every waiting byte (the far end is gone); counts and the end of the stream stay.
  void discard() {
    m_chunks.clear();
    m_pending = 0;
  }

 private:
  struct Chunk {
    Nanos due{0};
    std::vector<std::uint8_t> bytes;
    std::size_t done = 0;  // bytes of it already consumed
  };
  LinkSchedule m_schedule;
  std::deque<Chunk> m_chunks;
  std::optional<Nanos> m_eof;
  std::size_t m_pending = 0;
  std::uint64_t m_delivered = 0;
};

}  // namespace linksim
