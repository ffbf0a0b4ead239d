/* device_op.c - the device hook of the non-pointwise CPU kernels (see device_op.h). */
#include "cpu/device_op.h"

kd_cpu_device_op_fn kd_cpu_device_op = NULL;

kd_status kd_cpu_device_run(kd_device dev, kd_dev_op *op) {
  if (!kd_cpu_device_op) return kd_error(KD_ERR_NOT_SUPPORTED, "no kernel of this op family is registered for this device");
  return kd_cpu_device_op(dev, op);
}
