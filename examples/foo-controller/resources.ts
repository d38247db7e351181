/** The example's resources, for `kapi serve --resources dist/examples/foo-controller/resources.js`. */
import { Foo } from './foo.js';

export default [Foo];
