// queue_background (task.h): a Task run on the core's background threads, its promise settled
// on the JS thread of the environment that queued it, through a thread-safe function (which also
// keeps that environment's event loop alive until the task is done, as a queued AsyncWorker does).
#include "priority.h"
#include "task.h"

namespace sable::binding {

namespace {

void settle_on_js_thread(napi_env env, napi_value, void* context, void*) {
  Task* task = static_cast<Task*>(context);
  // No env: the environment is being torn down (a worker thread ending); nothing can be
  // settled, and the AsyncWorker cannot be deleted without it, so the task is left.
  if (env == nullptr) return;
  task->settle(Napi::Env(env));
  delete task;
}

}  // namespace

Napi::Value queue_background(Task* task) {
  Napi::Env env = task->Env();
  Napi::Promise p = task->promise();
  napi_threadsafe_function done = nullptr;
  napi_value name = Napi::String::New(env, "sable.background");
  if (napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, nullptr, nullptr, task, settle_on_js_thread, &done) != napi_ok) {
    delete task;
    throw sable::Error(Code::internal, "cannot create the background task's completion");
  }
  post_background([task, done] {
    task->Execute();
    // Fails only when the environment is closing: the task is then left (settle_on_js_thread).
    napi_call_threadsafe_function(done, nullptr, napi_tsfn_blocking);
    napi_release_threadsafe_function(done, napi_tsfn_release);
  });
  return p;
}

}  // namespace sable::binding
