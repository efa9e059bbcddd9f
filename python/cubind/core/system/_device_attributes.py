"""A device's engine counts and memory size (Device.attributes)."""

from __future__ import annotations

from cubind.bindings import nvml


class DeviceAttributes:
    """A device's engine counts and memory size (nvmlDeviceGetAttributes_v2)."""

    def __init__(self, attributes: nvml.DeviceAttributes):
        self._attributes = attributes

    @property
    def multiprocessor_count(self) -> int:
        """Streaming multiprocessors."""
        return self._attributes.multiprocessor_count

    @property
    def shared_copy_engine_count(self) -> int:
        """Shared copy engines."""
        return self._attributes.shared_copy_engine_count

    @property
    def shared_decoder_count(self) -> int:
        """Shared decoder engines."""
        return self._attributes.shared_decoder_count

    @property
    def shared_encoder_count(self) -> int:
        """Shared encoder engines."""
        return self._attributes.shared_encoder_count

    @property
    def shared_jpeg_count(self) -> int:
        """Shared JPEG engines."""
        return self._attributes.shared_jpeg_count

    @property
    def shared_ofa_count(self) -> int:
        """Shared optical flow accelerators."""
        return self._attributes.shared_ofa_count

    @property
    def gpu_instance_slice_count(self) -> int:
        """GPU instance slices."""
        return self._attributes.gpu_instance_slice_count

    @property
    def compute_instance_slice_count(self) -> int:
        """Compute instance slices."""
        return self._attributes.compute_instance_slice_count

    @property
    def memory_size_mb(self) -> int:
        """Device memory, in MiB."""
        return self._attributes.memory_size_mb
