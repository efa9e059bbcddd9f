"""Calls every public method and property of cubind.core with bad arguments.

    python _core_bad_input_sweep.py core START [--gpu]

The protocol is _bad_input_sweep.py's, so test_bad_input.run_sweep drives both:
before each call a line `@ INDEX NAME PARAM LABEL` (flushed), `! ...` for an
exception of a type outside ALLOWED, `U ...` for an exception whose message
names neither the parameter nor the value's type, `- ...` for objects that
could not be made here, `# done CALLS` last.

Objects come from whatever driver the loader finds: the stand-in driver of
fake_driver/ in CI (test_bad_input runs this with it), a GPU with --gpu. Each
method gets, for each of its parameters in turn, each bad value while the
others hold neutral values chosen by parameter name; then every method and
property is used on an object that was closed. Every object is made anew for
each call, so no call sees what another left behind.
"""
import faulthandler
import inspect
import math
import os
import sys
import traceback

faulthandler.enable()

import cubind.core as cc  # noqa: E402

ALLOWED = (TypeError, ValueError, OverflowError, RuntimeError, MemoryError, BufferError, NotImplementedError,
           KeyError, IndexError, OSError)

# The kernel reads and writes nothing: the sweep hands it bad addresses, and a
# fault would spoil the context for every later call.
SOURCE = r"""
extern "C" __global__ void k4_8(int a, double* b) { }
"""


class Opaque:
    def __repr__(self):
        return "object()"


def bad_values(closed):
    values = [("None", None), ("str", "not-a-valid-value"), ("minus-one", -1), ("2**64", 2**64),
              ("nan", math.nan), ("float", 1.5), ("empty-list", []), ("long-list", [1] * 40), ("bytes", b"\x00"),
              ("object", Opaque())]
    values += [(f"closed-{name}", obj) for name, obj in closed.items()]
    return values


class World:
    """Fresh objects of each class, on device 0."""

    def __init__(self):
        self.device = cc.Device(0)
        self.device.set_current()
        self.arch = "sm_" + self.device.arch if self._has_gpu() else "sm_90"
        self.cubin = bytes(cc.Program(SOURCE, "c++", cc.ProgramOptions(arch=self.arch)).compile("cubin").code)
        self.ptx = bytes(cc.Program(SOURCE, "c++", cc.ProgramOptions(arch=self.arch)).compile("ptx").code)

    @staticmethod
    def _has_gpu():
        return "--gpu" in sys.argv

    def stream(self):
        return self.device.create_stream()

    def event(self):
        return self.device.create_event()

    def buffer(self):
        return self.device.allocate(256, stream=self.stream())

    def memory_resource(self):
        return cc.DeviceMemoryResource(0)

    def program(self):
        return cc.Program(SOURCE, "c++", cc.ProgramOptions(arch=self.arch))

    def object_code(self):
        return cc.ObjectCode.from_cubin(self.cubin, name="sweep")

    def kernel(self):
        return self.object_code().get_kernel("k4_8")

    def linker(self):
        return cc.Linker(cc.ObjectCode.from_ptx(self.ptx, name="sweep"), options=cc.LinkerOptions(arch=self.arch))

    def config(self):
        return cc.LaunchConfig(grid=1, block=1)

    def context(self):
        return self.device.context

    # Textures: an 8 x 8 float array holds 256 bytes, as buffer() does.
    def opaque_array(self):
        return self.device.create_opaque_array(cc.texture.OpaqueArrayOptions(
            shape=(8, 8), format="float32", num_channels=1, is_surface_load_store=True))

    def mipmapped_array(self):
        return self.device.create_mipmapped_array(cc.texture.MipmappedArrayOptions(
            shape=(8, 8), format="float32", num_channels=1, num_levels=2))

    def texture_object(self):
        return self.device.create_texture_object(
            resource=cc.texture.ResourceDescriptor.from_opaque_array(self.opaque_array()))

    def surface_object(self):
        return self.device.create_surface_object(
            resource=cc.texture.ResourceDescriptor.from_opaque_array(self.opaque_array()))


# The neutral value of a parameter, by its name.
def neutral(world, name):
    table = {
        "stream": world.stream, "size": lambda: 64, "nbytes": lambda: 64, "device_id": lambda: 0,
        "device": lambda: 0, "peer": lambda: 0, "event_or_stream": world.stream, "config": world.config,
        "kernel": world.kernel, "dst": world.buffer, "src": world.buffer, "value": lambda: 0, "width": lambda: 1,
        "target_type": lambda: "cubin", "name": lambda: "k4_8", "kernel_name": lambda: "k4_8",
        "name_expressions": lambda: (), "ptr": lambda: 0, "code": lambda: "int x;", "code_type": lambda: "c++",
        "module": lambda: world.cubin, "ctx": world.context, "layout": lambda: None, "fn": lambda: (lambda: None),
        "callback": lambda: (lambda: None), "handle": lambda: 0, "count": lambda: 1, "level": lambda: 0,
        "resource": lambda: cc.texture.ResourceDescriptor.from_opaque_array(world.opaque_array()),
    }
    make = table.get(name)
    return make() if make is not None else None


def makers(world):
    return {
        "Device": lambda: world.device, "Stream": world.stream, "Event": world.event, "Buffer": world.buffer,
        "DeviceMemoryResource": world.memory_resource, "Program": world.program, "ObjectCode": world.object_code,
        "Kernel": world.kernel, "Linker": world.linker, "LaunchConfig": world.config, "Context": world.context,
        "OpaqueArray": world.opaque_array, "MipmappedArray": world.mipmapped_array,
        "TextureObject": world.texture_object, "SurfaceObject": world.surface_object,
    }


def closers(world):
    # Objects closed before use, as the bad values and the objects of the closed pass.
    made = {}
    for name, make in (("Stream", world.stream), ("Event", world.event), ("Buffer", world.buffer),
                       ("Program", world.program), ("Linker", world.linker),
                       ("DeviceMemoryResource", world.memory_resource), ("OpaqueArray", world.opaque_array),
                       ("MipmappedArray", world.mipmapped_array), ("TextureObject", world.texture_object),
                       ("SurfaceObject", world.surface_object)):
        try:
            obj = make()
            obj.close()
            made[name] = obj
        except Exception as e:   # the stand-in driver lacks some entry points
            print(f"- closed {name}: {type(e).__name__}: {' '.join(str(e).split())[:160]}", flush=True)
    return made


def public_members(cls):
    for name in sorted(dir(cls)):
        if name.startswith("_") and name not in ("__dlpack__", "__dlpack_device__", "__enter__", "__exit__",
                                                 "__sub__", "__cuda_stream__"):
            continue
        member = inspect.getattr_static(cls, name, None)
        yield name, member


def parameters(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [p for p in sig.parameters.values() if p.name not in ("self", "cls")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


class Sweep:
    def __init__(self, start):
        self.start = start
        self.index = 0
        self.calls = 0

    def call(self, label, param, value_label, thunk, names=()):
        index = self.index
        self.index += 1
        if index < self.start:
            return
        print(f"@ {index} {label} {param} {value_label}", flush=True)
        self.calls += 1
        try:
            thunk()
        except ALLOWED as e:
            text = str(e)
            if param not in ("-", "self") and not any(n and n in text for n in names):
                print(f"U {label}({param}={value_label}): {type(e).__name__}: {' '.join(text.split())[:140]}",
                      flush=True)
        except Exception as e:   # noqa: BLE001 - the point is to see every other kind
            print(f"! {label}({param}={value_label}): {type(e).__name__}: {' '.join(str(e).split())[:160]}",
                  flush=True)


def call_with(world, obj, name, params, bad_index, bad):
    args, kwargs = [], {}
    for i, p in enumerate(params):
        value = bad if i == bad_index else neutral(world, p.name)
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    return getattr(obj, name)(*args, **kwargs)


def main():
    start = int(sys.argv[2])
    world = World()
    sweep = Sweep(start)
    closed = closers(world)
    values = bad_values(closed)
    for cls_name, make in sorted(makers(world).items()):
        cls = getattr(cc, cls_name, None) or getattr(cc.texture, cls_name)
        for name, member in public_members(cls):
            label = f"{cls_name}.{name}"
            if isinstance(member, property) or type(member).__name__ in ("getset_descriptor", "member_descriptor"):
                sweep.call(label, "-", "read", lambda: getattr(make(), name))
                if cls_name in closed:
                    sweep.call(label, "-", "read-closed", lambda: getattr(closed[cls_name], name))
                continue
            fn = getattr(cls, name, None)
            if not callable(fn):
                continue
            params = parameters(fn)
            if params is None:
                print(f"- {label}: no signature", flush=True)
                continue
            for i, p in enumerate(params):
                for value_label, value in values:
                    names = (p.name, type(value).__name__)
                    sweep.call(label, p.name, value_label,
                               lambda i=i, value=value: call_with(world, make(), name, params, i, value), names)
            if cls_name in closed:
                sweep.call(label, "self", "closed", lambda: call_with(world, closed[cls_name], name, params, -1, None))
    # launch(stream, config, kernel, *args), each position bad in turn.
    for position, pname in enumerate(("stream", "config", "kernel", "arg0", "arg1")):
        for value_label, value in values:
            def thunk(position=position, value=value):
                args = [world.stream(), world.config(), world.kernel(), 1, world.buffer()]
                args[position] = value
                cc.launch(*args)
            sweep.call("launch", pname, value_label, thunk, (pname, "argument", type(value).__name__, "kernel",
                                                              "stream", "config"))
    print(f"# done {sweep.calls}", flush=True)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(3)
