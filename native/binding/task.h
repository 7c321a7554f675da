// A promise-returning AsyncWorker around a lambda that runs off the JS thread, shared by every
// binding file whose work is long (index builds, snapshots, batches, embeddings). queue() runs it
// on the libuv pool (the foreground: searches, query embeddings); queue_background() on the
// core's background threads at low priority (priority.h), so long work never holds the libuv
// pool's threads while searches wait in its queue.
#pragma once
#include <napi.h>

#include <functional>
#include <string>
#include <vector>

#include "env.h"

namespace sable::binding {

class Task : public Napi::AsyncWorker {
 public:
  using Work = std::function<void()>;
  using Done = std::function<Napi::Value(Napi::Env)>;
  Task(Napi::Env env, Work work, Done done, std::vector<Napi::Value> keep_alive = {})
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), work_(std::move(work)), done_(std::move(done)) {
    for (auto& v : keep_alive) keep_.push_back(Napi::Persistent(v.As<Napi::Object>()));
  }
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      work_();
    } catch (const sable::Error& e) {
      fail(e.code(), e.what());
    } catch (const std::bad_alloc&) {
      fail(Code::out_of_memory, "the engine ran out of memory");
    } catch (const std::exception& e) {
      fail(Code::internal, e.what());
    }
  }
  // Settles the promise on the JS thread after Execute ran elsewhere (queue_background).
  void settle(Napi::Env env) {
    Napi::HandleScope scope(env);
    if (failed_) OnError(Napi::Error::New(env, message_));
    else OnOK();
  }
  void OnOK() override {
    try {
      deferred_.Resolve(done_(Env()));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }
  void OnError(const Napi::Error& e) override {
    try {
      throw_js(Env(), code_, e.Message());
    } catch (const Napi::Error& js) {
      deferred_.Reject(js.Value());
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  Work work_;
  Done done_;
  void fail(Code code, const std::string& message) {
    code_ = code;
    failed_ = true;
    message_ = message;
    SetError(message);
  }

  std::vector<Napi::ObjectReference> keep_;
  Code code_ = Code::internal;
  bool failed_ = false;
  std::string message_;
};

inline Napi::Value queue(Task* task) {
  Napi::Promise p = task->promise();
  task->Queue();
  return p;
}

Napi::Value queue_background(Task* task);

}  // namespace sable::binding
