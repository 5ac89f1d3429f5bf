// A NeuronCore's profiling event ring buffer: fixed capacity, the oldest event overwritten when
// full, overwrites counted (Neuron's max_events_per_nc behaviour).
//
// Not thread-safe; the owning core guards it.
#ifndef OPSCOPE_SRC_DEVICE_NEURON_EVENT_RING_H_
#define OPSCOPE_SRC_DEVICE_NEURON_EVENT_RING_H_

#include <cstdint>
#include <vector>

#include "opscope/activity.h"

namespace opscope::neuron {

class EventRing {
 public:
  explicit EventRing(size_t capacity = 0) { Reset(capacity); }

  // Empties the ring and sets its capacity (0 = record nothing; every push counts as dropped).
  void Reset(size_t capacity) {
    capacity_ = capacity;
    slots_.clear();
    head_ = 0;
    dropped_ = 0;
  }
  size_t capacity() const { return capacity_; }
  size_t size() const { return slots_.size(); }

  void Push(DeviceActivity event) {
    if (capacity_ == 0) {
      ++dropped_;
      return;
    }
    if (slots_.size() < capacity_) {
      slots_.push_back(std::move(event));
      return;
    }
    slots_[head_] = std::move(event);  // overwrite the oldest
    head_ = (head_ + 1) % capacity_;
    ++dropped_;
  }

  // Moves the events out, oldest first, and returns how many were overwritten since the last
  // drain; the ring is empty afterwards.
  uint64_t Drain(std::vector<DeviceActivity>* out) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      out->push_back(std::move(slots_[(head_ + i) % slots_.size()]));
    }
    slots_.clear();
    head_ = 0;
    uint64_t dropped = dropped_;
    dropped_ = 0;
    return dropped;
  }

 private:
  std::vector<DeviceActivity> slots_;
  size_t capacity_ = 0;
  size_t head_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_EVENT_RING_H_
