module tether.dev/examples/go-host

go 1.19

require tether.dev/bindings/go v0.0.0

replace tether.dev/bindings/go => ../../bindings/go
