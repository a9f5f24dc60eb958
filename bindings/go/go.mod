module tether.dev/bindings/go

go 1.19
