// Package compat holds gosr's compatibility suite: real models that
// nobody on the project wrote (torchvision's classification,
// segmentation and video models, torch.nn's recurrent, attention and
// other layers), each saved four ways by PyTorch (scripts/make_zoo.py),
// loaded and run by gosr and compared with PyTorch's eager output. The
// suite is its own test package so that making the archives (minutes, on
// first use) has a test binary's time to itself.
//
//	make zoo                                         # make the archives into the cache
//	go test ./internal/compat/                       # run them all
//	go test ./internal/compat/ -args -zoo-report F   # and write each result to F (scripts/zoo_table.py)
package compat
