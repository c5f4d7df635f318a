#pragma once
// A fixed-capacity ring buffer: the newest `capacity` values, oldest first. ImPlot draws it in place through
// data() + offset() (it never owns data), so no copy is made per frame.
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace ts {

template <class T>
class RingBuffer {
 public:
  explicit RingBuffer(size_t capacity) : m_data(capacity) {
    if (capacity == 0) throw std::invalid_argument("RingBuffer capacity must be positive");
  }
  void push(const T& v) {
    m_data[m_head] = v;
    m_head = (m_head + 1) % m_data.size();
    if (m_size < m_data.size()) ++m_size;
  }
  void clear() { m_head = m_size = 0; }
  size_t size() const { return m_size; }
  size_t capacity() const { return m_data.size(); }
  bool empty() const { return m_size == 0; }
  // i-th oldest value (0 = oldest).
  const T& operator[](size_t i) const { return m_data[(start() + i) % m_data.size()]; }
  const T& back() const { return (*this)[m_size - 1]; }
  // For plotting in place: the storage and the index of the oldest value in it.
  const T* data() const { return m_data.data(); }
  size_t offset() const { return start(); }
  std::vector<T> to_vector() const {
    std::vector<T> v;
    v.reserve(m_size);
    for (size_t i = 0; i < m_size; ++i) v.push_back((*this)[i]);
    return v;
  }

 private:
  size_t start() const { return m_size < m_data.size() ? 0 : m_head; }
  std::vector<T> m_data;
  size_t m_head = 0, m_size = 0;
};

}  // namespace ts
