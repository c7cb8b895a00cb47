import { Module } from '@nestjs/common';
import { AuthorizeModule } from './authorize/authorize.module';
import { ConnectionsModule } from './connections/connections.module';
import { LoginModule } from './login/login.module';
import { ViewsModule } from './views/views.module';

/**
 * The pages of consent-ui. Their collaborators come from global modules: RpcClient (RpcModule)
 * and SessionsRepository (SessionStoreModule) in the app; fakes in the unit specs.
 */
@Module({ imports: [LoginModule, AuthorizeModule, ConnectionsModule, ViewsModule] })
export class ConsentUiFeaturesModule {}
