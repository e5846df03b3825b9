#ifndef CUNUMPY_SRC_RECORDER_CONTENTS_HPP
#define CUNUMPY_SRC_RECORDER_CONTENTS_HPP

// The contents of copies, hashed for the advice on redundant copies while
// a sink asks for it (EventSink::wants_contents): only the host side of a
// copy is read, with xxHash's XXH3. A copy to the host moved nothing new
// when its destination held the same bytes before; a copy to the device,
// when its source holds the bytes last copied into the same device buffer
// (as far as the recorder saw: a kernel may have written the buffer since).

#include "recorder/records.hpp"
#include "recorder/thread_state.hpp"

namespace cunumpy::Impl {

/// At a transfer's begin: whether its contents can be checked (the host
/// side is a space of a known host name, so readable by the host), and for
/// a copy to the host the hash of its destination before the copy.
void begin_content_check(InFlightCopy& copy, const char* host_space) noexcept;

/// At its end (copy.hash_contents set): whether the destination held the
/// bytes already.
Content end_content_check(const InFlightCopy& copy) noexcept;

} // namespace cunumpy::Impl

#endif
