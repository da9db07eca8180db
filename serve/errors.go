package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
)

// Code classifies a failed request; each protocol maps it to its own
// status (HTTPStatus, GRPCCode).
type Code int

const (
	CodeInternal         Code = iota // a bug or a model's run failing
	CodeInvalidArgument              // the request is malformed or does not fit the model
	CodeNotFound                     // no such model or version
	CodeUnavailable                  // not ready, draining, or the queue is full
	CodeDeadlineExceeded             // the request's deadline passed
	CodeCanceled                     // the client went away
	CodeTooLarge                     // the body is over the server's limit
)

// Error is a failed request: what the client is told, and how.
type Error struct {
	Code Code
	Msg  string
	Err  error // the cause, if any (reachable through errors.Is/As)
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func errorf(c Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: c, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// ErrQueueFull answers a request that finds its model's queue full.
var ErrQueueFull = &Error{Code: CodeUnavailable, Msg: "the model's queue is full; retry later"}

// asError classifies err: an *Error as it is, a context error by its
// kind, anything else as an internal error (a model's run failing).
func asError(err error) *Error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeDeadlineExceeded, Msg: "the request's deadline passed: " + err.Error(), Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeCanceled, Msg: "the request was cancelled: " + err.Error(), Err: err}
	}
	return &Error{Code: CodeInternal, Msg: err.Error(), Err: err}
}

// HTTPStatus is the status code of c on the REST protocol.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeInvalidArgument:
		return http.StatusBadRequest
	case CodeNotFound:
		return http.StatusNotFound
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case CodeCanceled:
		return 499 // client closed request (nginx's code; nobody reads it)
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// GRPCCode is the status code of c on the gRPC protocol.
func (c Code) GRPCCode() codes.Code {
	switch c {
	case CodeInvalidArgument:
		return codes.InvalidArgument
	case CodeNotFound:
		return codes.NotFound
	case CodeUnavailable:
		return codes.Unavailable
	case CodeDeadlineExceeded:
		return codes.DeadlineExceeded
	case CodeCanceled:
		return codes.Canceled
	case CodeTooLarge:
		return codes.ResourceExhausted
	}
	return codes.Internal
}
