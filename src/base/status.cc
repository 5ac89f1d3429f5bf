// Status (see opscope/status.h).
#include "opscope/status.h"

#include <utility>

namespace opscope {

Status::Status(Code code, std::string message, uint64_t offset, std::string file)
    : rep_(std::make_unique<Rep>(Rep{code, offset, std::move(message), std::move(file)})) {}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

Status Status::InvalidInput(std::string message, uint64_t offset, std::string file) {
  return Status(Code::kInvalidInput, std::move(message), offset, std::move(file));
}

Status Status::InvalidArgument(std::string message) {
  return Status(Code::kInvalidArgument, std::move(message), 0, {});
}

Status Status::NotFound(std::string message, std::string file) {
  return Status(Code::kNotFound, std::move(message), 0, std::move(file));
}

Status Status::IoError(std::string message, std::string file) {
  return Status(Code::kIoError, std::move(message), 0, std::move(file));
}

Status Status::Unavailable(std::string message) {
  return Status(Code::kUnavailable, std::move(message), 0, {});
}

const std::string& Status::message() const noexcept {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

const std::string& Status::file() const noexcept {
  static const std::string kEmpty;
  return rep_ ? rep_->file : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(opscope::ToString(rep_->code));
  s += ": ";
  s += rep_->message;
  return s;
}

Status Status::InFile(std::string_view path) && {
  if (rep_) {
    rep_->message.insert(0, std::string(path) + ": ");
    rep_->file = std::string(path);
  }
  return std::move(*this);
}

std::string_view ToString(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidInput:
      return "invalid input";
    case Status::Code::kInvalidArgument:
      return "invalid argument";
    case Status::Code::kNotFound:
      return "not found";
    case Status::Code::kIoError:
      return "I/O error";
    case Status::Code::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

}  // namespace opscope
