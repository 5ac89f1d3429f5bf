"""torch.neuron's spelling for the simulated NeuronCore (device "neuron")."""

from . import _opscope


def synchronize():
    """Waits for all work queued on the simulated NeuronCores (releases the GIL)."""
    _opscope.neuron_synchronize()


def device_count():
    """NeuronCores the device model has ("neuron:0" .. "neuron:N-1")."""
    return _opscope.neuron_device_count()


def is_available():
    return device_count() > 0
