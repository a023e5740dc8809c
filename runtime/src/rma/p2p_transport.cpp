#include "p2p_transport.hpp"

#include "../base/backoff.hpp"
#include "../topo/topology.hpp"

#include <earlybird/error.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <mutex>
#include <string>

namespace earlybird {
namespace {

constexpr int kRequestTag = 7401;
constexpr int kDataTag = 7402;
constexpr int kFirstAnswerTag = 8192;  // answers: kFirstAnswerTag + (request number mod answer_tags_)
constexpr int kMaxAnswerTags = 1 << 20;

// Calls piece(offset, bytes) for each piece a put's `bytes` of data travel
// in, in order: kDataPieceBytes each, the last shorter. Sender and target
// cut alike, so every receive matches its send.
template <class Piece>
void for_each_data_piece(std::size_t bytes, Piece&& piece) {
  for (std::size_t done = 0; done < bytes; done += P2pTransport::kDataPieceBytes)
    piece(done, std::min(P2pTransport::kDataPieceBytes, bytes - done));
}

int mpi_count(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw Error(std::string("earlybird p2p transport: ") + what + " of " + std::to_string(bytes) +
                " bytes is larger than one MPI message can carry");
  return static_cast<int>(bytes);
}

std::atomic_ref<std::uint64_t> word_at(std::byte* address) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(address));
}

// The open transports of this process, which every wait serves. A transport
// joins when constructed and leaves at the start of close().
struct OpenTransports {
  std::mutex mutex;
  std::vector<P2pTransport*> all;
};
OpenTransports& open_transports() {
  static OpenTransports registry;
  return registry;
}

}  // namespace

P2pTransport::P2pTransport(MPI_Comm comm, WindowSize window, std::chrono::milliseconds wait_limit)
    : P2pTransport(comm, window, wait_limit, nullptr) {}

P2pTransport::P2pTransport(MPI_Comm comm, WindowSize window, std::chrono::milliseconds wait_limit, std::byte* memory)
    : comm_(duplicate_for_transport(comm, window.bytes)),
      owned_window_(memory ? nullptr : new std::byte[window.bytes]),
      window_(memory ? memory : owned_window_.get()),
      window_bytes_(window.bytes),
      wait_limit_(wait_limit) {
  if (owned_window_) clear_window(window_, window);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  node_ranks_ = node_layout(comm_).uniform_ranks;
  sources_.resize(static_cast<std::size_t>(size_));
  peer_closed_.assign(static_cast<std::size_t>(size_), 0);
  peer_gone_.assign(static_cast<std::size_t>(size_), 0);
  asks_.assign(static_cast<std::size_t>(size_), 0);
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
  answer_tags_ = std::min(kMaxAnswerTags, (found ? *tag_ub : 32767) - kFirstAnswerTag + 1);
  posted_.resize(static_cast<std::size_t>(size_ > 1 ? kPostedReceives : 0));
  for (auto& slot : posted_) {
    slot.buffer.resize(sizeof(Header) + kInlineBytes);
    post(slot);
  }
  clock_ = agree_on_clock(comm_);
  std::lock_guard lock(open_transports().mutex);
  open_transports().all.push_back(this);
}

bool P2pTransport::serve_all() {
  std::lock_guard lock(open_transports().mutex);
  bool progressed = false;
  for (P2pTransport* t : open_transports().all) {
    std::unique_lock serving(t->mutex_, std::try_to_lock);  // held elsewhere: that thread serves it
    if (serving) progressed |= t->service();
  }
  return progressed;
}

bool P2pTransport::poll_hook() {
  std::unique_lock serving(mutex_, std::try_to_lock);
  return serving && service();
}

P2pTransport::~P2pTransport() {
  try {
    close();
  } catch (...) {
    // Destructors do not throw; close() reported nothing the caller can act on.
  }
}

void P2pTransport::post(Posted& slot) {
  check_mpi(MPI_Irecv(slot.buffer.data(), static_cast<int>(slot.buffer.size()), MPI_BYTE, MPI_ANY_SOURCE,
                      kRequestTag, comm_, &slot.request),
            "MPI_Irecv (p2p requests)");
}

std::byte* P2pTransport::at(std::size_t offset, std::size_t bytes, const char* what) {
  if (offset > window_bytes_ || bytes > window_bytes_ - offset)
    throw Error(std::string("earlybird p2p transport: ") + what + " of " + std::to_string(bytes) +
                " bytes at offset " + std::to_string(offset) + " is outside the " +
                std::to_string(window_bytes_) + "-byte window");
  return window_ + offset;
}

// ---- target side ------------------------------------------------------------

bool P2pTransport::service() {
  if (comm_ == MPI_COMM_NULL) return false;
  bool progressed = finish_data_receives();
  progressed |= take_matched();
  progressed |= finish_sends();
  if (!given_up_.empty()) progressed |= drop_late_answers();
  return progressed;
}

// Answers that came after their wait gave up: received and dropped, their
// tags free again.
bool P2pTransport::drop_late_answers() {
  bool progressed = false;
  for (std::size_t i = 0; i < given_up_.size();) {
    int found = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(given_up_[i].target, given_up_[i].tag, comm_, &found, &message, &status),
              "MPI_Improbe (p2p late answer)");
    if (!found) {
      ++i;
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    std::vector<std::byte> dropped(static_cast<std::size_t>(bytes));
    check_mpi(MPI_Mrecv(dropped.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv (p2p late answer)");
    given_up_[i] = given_up_.back();
    given_up_.pop_back();
    progressed = true;
  }
  return progressed;
}

// Applies requests whose receive matched, oldest first (posting order is
// matching order, so each source's requests are applied in the order sent).
bool P2pTransport::take_matched() {
  bool progressed = false;
  while (!posted_.empty()) {
    Posted& slot = posted_[next_];
    int done = 0;
    MPI_Status status;
    check_mpi(MPI_Test(&slot.request, &done, &status), "MPI_Test (p2p requests)");
    if (!done) break;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    Source& source = sources_[static_cast<std::size_t>(status.MPI_SOURCE)];
    if (!source.data.empty()) {
      source.deferred.emplace_back(slot.buffer.begin(), slot.buffer.begin() + bytes);
    } else {
      apply_and_answer(status.MPI_SOURCE, slot.buffer.data(), static_cast<std::size_t>(bytes));
    }
    post(slot);
    next_ = (next_ + 1) % posted_.size();
    progressed = true;
  }
  return progressed;
}

bool P2pTransport::finish_data_receives() {
  bool progressed = false;
  for (std::size_t i = 0; i < receiving_.size();) {
    Source& source = sources_[static_cast<std::size_t>(receiving_[i])];
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(source.data.size()), source.data.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall (p2p put data)");
    if (!done) {
      ++i;
      continue;
    }
    source.data.clear();
    progressed = true;
    const int from = receiving_[i];
    receiving_[i] = receiving_.back();
    receiving_.pop_back();
    while (source.data.empty() && !source.deferred.empty()) {
      const std::vector<std::byte> message = std::move(source.deferred.front());
      source.deferred.pop_front();
      apply_and_answer(from, message.data(), message.size());
    }
  }
  return progressed;
}

bool P2pTransport::sends_pending() {
  std::lock_guard lock(mutex_);
  finish_sends();
  return !outgoing_.empty();
}

bool P2pTransport::finish_sends() {
  bool progressed = false;
  while (!outgoing_.empty()) {
    int done = 0;
    check_mpi(MPI_Test(&outgoing_.front().request, &done, MPI_STATUS_IGNORE), "MPI_Test (p2p send)");
    if (!done) break;
    outgoing_.pop_front();
    progressed = true;
  }
  return progressed;
}

P2pTransport::Answer P2pTransport::apply(int source, const std::byte* message, std::size_t bytes) {
  Header header;
  if (bytes < sizeof header) throw Error("earlybird p2p transport: a request shorter than its header arrived");
  std::memcpy(&header, message, sizeof header);
  const std::byte* data = message + sizeof header;
  const std::size_t data_bytes = bytes - sizeof header;
  Answer answer;
  switch (header.kind) {
    case Kind::put:
      std::memcpy(at(header.offset, data_bytes, "a put"), data, data_bytes);
      return answer;
    case Kind::put_data: {
      Source& from = sources_[static_cast<std::size_t>(source)];
      std::byte* into = at(header.offset, header.count, "a put");
      for_each_data_piece(header.count, [&](std::size_t done, std::size_t piece) {
        MPI_Request& request = from.data.emplace_back(MPI_REQUEST_NULL);
        check_mpi(MPI_Irecv(into + done, mpi_count(piece, "a put"), MPI_BYTE, source, kDataTag, comm_, &request),
                  "MPI_Irecv (p2p put data)");
      });
      receiving_.push_back(source);
      return answer;
    }
    case Kind::notify:
      word_at(at(header.offset, sizeof(std::uint64_t), "a flag")).store(header.value, std::memory_order_release);
      return answer;
    case Kind::put_notify:
      std::memcpy(at(header.offset, data_bytes, "a put"), data, data_bytes);
      word_at(at(header.flag_offset, sizeof(std::uint64_t), "a flag")).store(header.value, std::memory_order_release);
      return answer;
    case Kind::get: {
      const std::byte* from = at(header.offset, header.count, "a get");
      answer.expected = true;
      answer.tag = static_cast<int>(header.answer_tag);
      answer.payload.assign(from, from + header.count);
      return answer;
    }
    case Kind::load_words: {
      std::byte* words = at(header.offset, header.count * sizeof(std::uint64_t), "a read");
      answer.expected = true;
      answer.tag = static_cast<int>(header.answer_tag);
      answer.payload.resize(header.count * sizeof(std::uint64_t));
      for (std::size_t i = 0; i < header.count; ++i) {
        const std::uint64_t value = word_at(words + 8 * i).load(std::memory_order_acquire);
        std::memcpy(answer.payload.data() + 8 * i, &value, sizeof value);
      }
      return answer;
    }
    case Kind::post_words: {
      std::byte* words = at(header.offset, data_bytes, "a store");
      for (std::size_t i = 0; i < data_bytes / sizeof(std::uint64_t); ++i) {
        std::uint64_t value = 0;
        std::memcpy(&value, data + 8 * i, sizeof value);
        word_at(words + 8 * i).store(value, std::memory_order_release);
      }
      return answer;
    }
    case Kind::fetch_add: {
      const std::uint64_t previous =
          word_at(at(header.offset, sizeof(std::uint64_t), "a fetch-add")).fetch_add(header.value);
      answer.expected = true;
      answer.tag = static_cast<int>(header.answer_tag);
      answer.payload.resize(sizeof previous);
      std::memcpy(answer.payload.data(), &previous, sizeof previous);
      return answer;
    }
    case Kind::close:
      if (!peer_closed_[static_cast<std::size_t>(source)]) {
        peer_closed_[static_cast<std::size_t>(source)] = 1;
        ++closed_peers_;
      }
      return answer;
    case Kind::gone:
      peer_gone_[static_cast<std::size_t>(source)] = 1;
      return answer;
  }
  throw Error("earlybird p2p transport: a request of unknown kind arrived from rank " + std::to_string(source));
}

void P2pTransport::apply_and_answer(int source, const std::byte* message, std::size_t bytes) {
  Answer answer = apply(source, message, bytes);
  if (!answer.expected) return;
  Outgoing out;
  out.buffer = std::move(answer.payload);
  check_mpi(MPI_Isend(out.buffer.data(), mpi_count(out.buffer.size(), "an answer"), MPI_BYTE, source, answer.tag,
                      comm_, &out.request),
            "MPI_Isend (p2p answer)");
  outgoing_.push_back(std::move(out));
}

// ---- origin side ------------------------------------------------------------

// A request and up to kInlineBytes of data in one message; the caller may
// reuse `data` on return (it was copied).
void P2pTransport::send(int target, const Header& header, const void* data, std::size_t bytes) {
  Outgoing out;
  // Copied in, not zero-filled first (up to kInlineBytes of data).
  const auto* header_bytes = reinterpret_cast<const std::byte*>(&header);
  out.buffer.reserve(sizeof header + bytes);
  out.buffer.assign(header_bytes, header_bytes + sizeof header);
  if (bytes > 0) out.buffer.insert(out.buffer.end(), static_cast<const std::byte*>(data),
                                   static_cast<const std::byte*>(data) + bytes);
  if (target == rank_) {
    apply(rank_, out.buffer.data(), out.buffer.size());
    return;
  }
  check_mpi(MPI_Isend(out.buffer.data(), static_cast<int>(out.buffer.size()), MPI_BYTE, target, kRequestTag, comm_,
                      &out.request),
            "MPI_Isend (p2p request)");
  outgoing_.push_back(std::move(out));
}

// Sends a request and waits for the target's answer (`answer_bytes` into `answer`).
void P2pTransport::ask(int target, Header header, const void* data, std::size_t bytes, void* answer,
                       std::size_t answer_bytes, const char* what) {
  if (target == rank_) {
    std::vector<std::byte> message(sizeof header + bytes);
    std::memcpy(message.data(), &header, sizeof header);
    if (bytes > 0) std::memcpy(message.data() + sizeof header, data, bytes);
    const Answer local = apply(rank_, message.data(), message.size());
    if (answer_bytes > 0) std::memcpy(answer, local.payload.data(), answer_bytes);
    return;
  }
  header.answer_tag = next_answer_tag(target);
  MPI_Request reply = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(answer, mpi_count(answer_bytes, what), MPI_BYTE, target, static_cast<int>(header.answer_tag),
                      comm_, &reply),
            "MPI_Irecv (p2p answer)");
  try {
    send(target, header, data, bytes);
    wait(reply, target, what);
  } catch (...) {
    if (cancel_receive(reply)) given_up_.push_back({target, static_cast<int>(header.answer_tag)});
    throw;
  }
}

int P2pTransport::next_answer_tag(int target) {
  for (;;) {
    const int tag = kFirstAnswerTag + static_cast<int>(asks_[static_cast<std::size_t>(target)]++ %
                                                       static_cast<std::uint64_t>(answer_tags_));
    const bool still_awaited = std::any_of(given_up_.begin(), given_up_.end(), [&](const LateAnswer& late) {
      return late.target == target && late.tag == tag;
    });
    if (!still_awaited) return tag;
  }
}

bool P2pTransport::cancel_receive(MPI_Request& request) {
  MPI_Cancel(&request);
  MPI_Status status;
  MPI_Wait(&request, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  return cancelled != 0;
}

// An answer is the peer's to send: while no other rank shares this rank's
// cores the waiter spins first, needing nothing of this machine but the MPI
// progress its own MPI_Test makes. (Yielding from the start, as for a rank
// bound to one core, handed the CPU a scheduler slice to whatever else was
// runnable: on 2 x 1 emulated hosts a blocking bcast of 8 B, whose root asks
// whether its peer is done with the lane, took 0.4-3.7 ms at the median
// against 38-46 us spinning; docs/benchmarks.md, "Answers waited for by
// spinning".)
void P2pTransport::wait(MPI_Request& request, int peer, const char* what) {
  wait(request, peer, what, Backoff(topo::cores_shared_with_other_ranks()));
}

void P2pTransport::wait(MPI_Request& request, int peer, const char* what, Backoff backoff) {
  const auto deadline = std::chrono::steady_clock::now() + wait_limit_;
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test (p2p wait)");
    if (done) return;
    if (peer != rank_ && peer_gone_[static_cast<std::size_t>(peer)])
      throw Error("earlybird p2p transport: rank " + std::to_string(peer) + " stopped answering before taking " + what +
                  " (it closed the communicator and gave up waiting for the other ranks to close)");
    if (serve_all()) {
      backoff.reset();
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error("earlybird p2p transport: rank " + std::to_string(rank_) + " waited " +
                  std::to_string(wait_limit_.count()) + " ms for rank " + std::to_string(peer) + " to take " + what +
                  " (it may have stopped, or stopped calling MPI)");
    }
    backoff.pause();
  }
}

void P2pTransport::put(int target, std::size_t offset, const void* src, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (bytes <= kInlineBytes || target == rank_) {
    send(target, Header{Kind::put, offset, bytes, 0}, src, bytes);
    return;
  }
  send(target, Header{Kind::put_data, offset, bytes, 0}, nullptr, 0);
  const auto* from = static_cast<const std::byte*>(src);
  // A piece takes long enough (128 KiB: 1 ms at 1 Gbit/s) that its sender
  // sleeps while it travels, leaving the CPU to a computation the collective
  // overlaps (docs/benchmarks.md, "Overlap across hosts: sleeping senders").
  const FineTimerSlack precise_sleeps;
  for_each_data_piece(bytes, [&](std::size_t done, std::size_t piece) {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(from + done, mpi_count(piece, "a put"), MPI_BYTE, target, kDataTag, comm_, &request),
              "MPI_Isend (p2p put data)");
    try {
      wait(request, target, "a put's data", Backoff::for_messages(topo::cores_shared_with_other_ranks()));
    } catch (...) {
      MPI_Cancel(&request);  // a send: freed, not waited for (it may never be received)
      MPI_Request_free(&request);
      throw;
    }
  });
}

void P2pTransport::get(int target, std::size_t offset, void* dst, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  ask(target, Header{Kind::get, offset, bytes, 0}, nullptr, 0, dst, bytes, "a get");
}

void P2pTransport::notify(int target, std::size_t offset, std::uint64_t value) {
  std::lock_guard lock(mutex_);
  send(target, Header{Kind::notify, offset, 0, value}, nullptr, 0);
}

void P2pTransport::put_notify(int target, std::size_t offset, const void* src, std::size_t bytes,
                              std::size_t flag_offset, std::uint64_t value) {
  if (bytes > kInlineBytes) return Transport::put_notify(target, offset, src, bytes, flag_offset, value);
  std::lock_guard lock(mutex_);
  send(target, Header{Kind::put_notify, offset, bytes, value, flag_offset}, src, bytes);
}

std::uint64_t P2pTransport::load_flag(std::size_t offset) {
  return word_at(window_ + offset).load(std::memory_order_acquire);
}

void P2pTransport::store_local(std::size_t offset, std::uint64_t value) {
  word_at(window_ + offset).store(value, std::memory_order_release);
}

std::uint64_t P2pTransport::load_remote(int target, std::size_t offset) {
  std::lock_guard lock(mutex_);
  std::uint64_t value = 0;
  load_remote_words(target, offset, &value, 1);
  return value;
}

std::uint64_t P2pTransport::fetch_add(int target, std::size_t offset, std::uint64_t value) {
  std::lock_guard lock(mutex_);
  std::uint64_t previous = 0;
  ask(target, Header{Kind::fetch_add, offset, 0, value}, nullptr, 0, &previous, sizeof previous, "a fetch-add");
  return previous;
}

void P2pTransport::load_remote_words(int target, std::size_t offset, std::uint64_t* out, std::size_t count) {
  std::lock_guard lock(mutex_);
  ask(target, Header{Kind::load_words, offset, count, 0}, nullptr, 0, out, count * sizeof(std::uint64_t),
      "a remote read");
}

void P2pTransport::post_remote_words(int target, std::size_t offset, const std::uint64_t* words, std::size_t count) {
  const std::size_t bytes = count * sizeof(std::uint64_t);
  if (bytes > kInlineBytes)
    throw Error("earlybird p2p transport: a remote store of more than " + std::to_string(kInlineBytes / 1024) +
                " KiB of words");
  std::lock_guard lock(mutex_);
  send(target, Header{Kind::post_words, offset, count, 0}, words, bytes);
}

void P2pTransport::fault_in(std::size_t offset, std::size_t bytes) {
  if (offset < window_bytes_) fault_in_pages(window_ + offset, std::min(bytes, window_bytes_ - offset));
}

std::unique_ptr<Transport> P2pTransport::split(int color, int key, WindowSize window) {
  return split_transport<P2pTransport>(comm_, color, key, window, wait_limit_);
}

// Tells the peers whose close did not arrive that this rank stops answering,
// so that their waits on it fail at once. The message needs no buffer of
// ours after return: it is a constant, and the request is released.
void P2pTransport::say_gone() {
  static const Header kGone{Kind::gone, 0, 0, 0};
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_ || peer_closed_[static_cast<std::size_t>(peer)]) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(&kGone, sizeof kGone, MPI_BYTE, peer, kRequestTag, comm_, &request) == MPI_SUCCESS)
      MPI_Request_free(&request);
  }
}

// Collective: tells every peer this rank sends nothing more, and keeps
// answering until every peer said the same, so no request is left unanswered.
void P2pTransport::close() {
  if (comm_ == MPI_COMM_NULL) return;
  {
    std::lock_guard lock(open_transports().mutex);
    auto& all = open_transports().all;
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
  }
  std::lock_guard lock(mutex_);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (int peer = 0; peer < size_; ++peer)
    if (peer != rank_) send(peer, Header{Kind::close, 0, 0, 0}, nullptr, 0);
  const auto deadline = std::chrono::steady_clock::now() + wait_limit_;
  Backoff backoff(topo::cores_shared());
  while ((closed_peers_ < size_ - 1 || !outgoing_.empty() || !receiving_.empty()) &&
         std::chrono::steady_clock::now() < deadline) {
    if (service()) {
      backoff.reset();
    } else {
      backoff.pause();
    }
  }
  const bool everyone_closed = closed_peers_ >= size_ - 1 && outgoing_.empty() && receiving_.empty();
  if (!everyone_closed) say_gone();
  for (auto& slot : posted_) cancel_receive(slot.request);  // completed, so their buffers may go
  for (auto& out : outgoing_) {
    MPI_Cancel(&out.request);
    MPI_Request_free(&out.request);
  }
  outgoing_.clear();
  // A peer that has not closed (stalled past the wait limit) may still send
  // on this communicator. Freed, its context could be reused by a later
  // communicator, where those messages would match requests meant for that
  // one: keep it (one communicator leaked per such close), and the window
  // too while a put's data is still being received into it.
  if (everyone_closed) MPI_Comm_free(&comm_);
  if (!receiving_.empty()) (void)owned_window_.release();
  comm_ = MPI_COMM_NULL;
}

}  // namespace earlybird
